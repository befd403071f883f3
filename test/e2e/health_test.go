package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var (
	certGVK        = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "Cert"}
	certificateGVK = schema.GroupVersionKind{Group: "pki.test.chartkeeper.dev", Version: "v1", Kind: "Certificate"}
	issuerGVK      = schema.GroupVersionKind{Group: "pki.test.chartkeeper.dev", Version: "v1", Kind: "Issuer"}
)

// healthWait bounds the waits below for a failure to be acted on: far
// less than the watch's readiness timeout (10m), so passing shows that a
// failure ended the wait, not the timeout.
const healthWait = 2 * time.Minute

// The walkthrough of docs/readiness-expressions.md. A chart asks another
// operator for a Certificate; kstatus cannot read that kind's status, so
// the watch says with CEL when it is issued (current), still being worked
// on (inProgress) and refused (failed). The test plays the other operator.
//
//   - Until the Certificate is issued the release is not Ready, and the
//     message names it; once issued, the release is Ready.
//   - An upgrade whose Certificate is refused ends its readiness wait at
//     once, not at the timeout: it is rolled back, and the failure names
//     the expression that matched.
//   - The Issuer is left to kstatus: an upgrade whose Issuer reports
//     Stalled (kstatus: Failed) ends its wait at once too, with the
//     Issuer's own message.
func TestReadinessExpressions(t *testing.T) {
	parallel(t, 45*time.Second)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-health.yaml")
	env, ns, _ := kindFixture(t, watchesFile, certGVK)
	ctx := context.Background()

	for _, name := range []string{"web", "api"} {
		if err := env.Client.Create(ctx, newCR(certGVK, ns, name, map[string]any{"commonName": name + ".example.test"})); err != nil {
			t.Fatal(err)
		}
	}
	// Released, but its Certificate is not issued: not Ready, and why.
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, certGVK, ns, "web")
		if err != nil {
			return err
		}
		ready := condition(st, api.ConditionReady)
		if st.Release == nil || st.Release.Revision != 1 || ready.Status != metav1.ConditionFalse || !strings.Contains(ready.Message, "Certificate web") {
			return fmt.Errorf("want revision 1 not Ready for its Certificate: %+v %+v", st.Release, st.Conditions)
		}
		return nil
	})
	for _, name := range []string{"web", "api"} {
		issue(t, env, ns, name)
		waitCRReady(t, env, certGVK, ns, name)
		waitRevision(t, env, ns, name, 1)
	}

	// An upgrade whose Certificate is refused.
	patchCR(t, env, certGVK, ns, "web", map[string]any{"dnsNames": []string{"www.example.test"}})
	waitRevision(t, env, ns, "web", 2)
	setStatus(t, env, certificateGVK, ns, "web", func(gen int64) map[string]any {
		return map[string]any{"observedGeneration": gen, "state": "Failed", "message": "the issuer refused www.example.test"}
	})
	rolledBack(t, env, ns, "web", "status.?state.orValue('') == 'Failed'")

	// An upgrade whose Issuer stalls (kstatus: Failed).
	patchCR(t, env, certGVK, ns, "api", map[string]any{"issuer": map[string]any{"kind": "ca", "caSecretName": "api-ca"}})
	waitRevision(t, env, ns, "api", 2)
	setStatus(t, env, issuerGVK, ns, "api", func(gen int64) map[string]any {
		return map[string]any{"observedGeneration": gen, "conditions": []any{map[string]any{
			"type": "Stalled", "status": "True", "reason": "SecretMissing", "message": "Secret api-ca not found",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	})
	rolledBack(t, env, ns, "api", "Secret api-ca not found")
}

// issue plays the Certificate's operator: the Issuer is Ready and the
// Certificate issued, at their current generations.
func issue(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	setStatus(t, env, issuerGVK, ns, name, func(gen int64) map[string]any {
		return map[string]any{"observedGeneration": gen, "conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "Ready", "message": "signing",
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
	})
	setStatus(t, env, certificateGVK, ns, name, func(gen int64) map[string]any {
		return map[string]any{"observedGeneration": gen, "state": "Issued"}
	})
}

// setStatus writes the status of a released object, given its generation.
func setStatus(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, status func(gen int64) map[string]any) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
			return err
		}
		u.Object["status"] = status(u.GetGeneration())
		return env.Client.Status().Update(ctx, u)
	})
}

// waitRevision waits until a Cert's release is at revision rev.
func waitRevision(t *testing.T, env *testenv.Env, ns, name string, rev int) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, certGVK, ns, name)
		if err != nil {
			return err
		}
		if st.Release == nil || st.Release.Revision != rev {
			return fmt.Errorf("release %+v, want revision %d", st.Release, rev)
		}
		return nil
	})
}

// rolledBack waits (healthWait, far less than the readiness timeout) until
// a Cert's upgrade failed for readiness, saying why (want), and was rolled
// back.
func rolledBack(t *testing.T, env *testenv.Env, ns, name, want string) {
	t.Helper()
	testenv.Eventually(t, healthWait, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, certGVK, ns, name)
		if err != nil {
			return err
		}
		if !strings.Contains(st.LastFailureMessage, want) {
			return fmt.Errorf("last failure %q does not say %q", st.LastFailureMessage, want)
		}
		if c := condition(st, api.ConditionRemediated); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRollbackSucceeded) {
			return fmt.Errorf("not rolled back: %+v", st.Conditions)
		}
		return nil
	})
	hist := helmCmd(t, env, "history", name, "-n", ns)
	if !strings.Contains(hist, "Rollback to 1") {
		t.Errorf("helm history of %s shows no rollback to revision 1:\n%s", name, hist)
	}
}
