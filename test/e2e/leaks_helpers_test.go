package e2e

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// operatorWrote is what the operator wrote about one custom resource, by
// where: its whole log, the resource's Events and its status. The log
// must hold debug lines (Helm's among them): a scan of less would prove
// little.
func operatorWrote(t *testing.T, env *testenv.Env, op *process, gvk schema.GroupVersionKind, ns, name string) map[string]string {
	t.Helper()
	ctx := context.Background()
	u, _, err := getCR(ctx, env, gvk, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[string]string{
		"operator log": op.out.String(),
		"events":       strings.Join(eventMessages(ctx, t, env, ns, name), "\n"),
		"status":       mustJSON(u.Object["status"]),
	}
	if !strings.Contains(wrote["operator log"], `"level":"debug"`) {
		t.Fatalf("the operator log has no debug lines: the scan would prove little")
	}
	return wrote
}

// noLeaks fails the test for each secret (by what it is) found in what
// the operator wrote (by where).
func noLeaks(t *testing.T, wrote, secrets map[string]string) {
	t.Helper()
	for where, text := range wrote {
		for what, secret := range secrets {
			if strings.Contains(text, secret) {
				t.Errorf("the %s contains %s (%q)", where, what, secret)
			}
		}
	}
}
