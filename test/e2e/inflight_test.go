package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A slow cluster, in small: two Apps are upgraded to a revision whose Pods
// wait for a node (no node has the label they select yet), and both time
// out (3s). With remediation.maxInFlight 1, one is rolled back; the other
// keeps waiting, Ready False ReadinessTimeout saying its remediation is
// deferred, and is not rolled back while the first's remediation goes on
// (its retries time out too, 10 of them). Then a node gets the label (the
// cluster catches up): the waiting one becomes Ready at its revision 2,
// never rolled back, and the remediated one is upgraded again and becomes
// Ready too.
func TestTimeoutRemediationsAreBounded(t *testing.T) {
	parallel(t, 40*time.Second)
	watchesFile := appWatches(t, "  remediation:\n    retries: 10\n    backoff: {initial: 1s, max: 2s}\n    maxInFlight: 1\n  readiness:\n    timeout: 3s\n")
	env, ns, _ := appFixture(t, watchesFile)
	ctx := context.Background()
	names := []string{"one", "two"}
	for _, n := range names {
		if err := env.Client.Create(ctx, newApp(ns, n, map[string]any{})); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		waitReady(t, env, ns, n, 1)
	}

	label := "chartkeeper.dev/late-" + ns
	for _, n := range names {
		patchSpec(t, env, ns, n, map[string]any{"nodeSelector": map[string]any{label: "true"}})
	}
	// One is deferred while the other is remediated.
	var held, remediated string
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		var seen []string
		for i, n := range names {
			_, st, err := getApp(ctx, env, ns, n)
			if err != nil {
				return err
			}
			c := condition(st, api.ConditionReady)
			if c.Reason == string(api.ReasonReadinessTimeout) && strings.Contains(c.Message, "remediation deferred") {
				held, remediated = n, names[1-i]
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s: release %+v, Ready %s %s %q, history %s", n, st.Release, c.Status, c.Reason, c.Message, attemptsOf(st)))
		}
		return fmt.Errorf("neither App says its remediation is deferred:\n%s", strings.Join(seen, "\n"))
	})
	// For a while (several timeouts and backoffs of the remediated one),
	// the held one stays at revision 2: never rolled back.
	for until := time.Now().Add(12 * time.Second); time.Now().Before(until); time.Sleep(time.Second) {
		_, st, err := getApp(ctx, env, ns, held)
		if err != nil {
			t.Fatal(err)
		}
		if st.Release == nil || st.Release.Revision != 2 {
			t.Fatalf("%s was remediated while %s's remediation was in flight: status.release %+v, Ready %+v",
				held, remediated, st.Release, condition(st, api.ConditionReady))
		}
	}
	_, st, err := getApp(ctx, env, ns, remediated)
	if err != nil {
		t.Fatal(err)
	}
	if st.Release == nil || st.Release.Revision < 3 {
		t.Fatalf("%s was not remediated: status.release %+v, Ready %+v", remediated, st.Release, condition(st, api.ConditionReady))
	}

	labelANode(t, env, label)
	waitReady(t, env, ns, held, 2) // never rolled back
	if st := waitReady(t, env, ns, remediated, 0); st.Release == nil || st.Release.Revision < 4 {
		t.Errorf("%s is Ready at %+v, want a revision after its rollback", remediated, st.Release)
	}
}

// labelANode gives one node the label (value "true") until the test ends.
func labelANode(t *testing.T, env *testenv.Env, label string) {
	t.Helper()
	ctx := context.Background()
	var nodes corev1.NodeList
	if err := env.Client.List(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if len(nodes.Items) == 0 {
		t.Fatal("the cluster has no node")
	}
	node := &nodes.Items[0]
	set := func(value *string) error {
		patch := fmt.Sprintf(`{"metadata":{"labels":{%q:null}}}`, label)
		if value != nil {
			patch = fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, label, *value)
		}
		return env.Client.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name}}, client.RawPatch("application/merge-patch+json", []byte(patch)))
	}
	yes := "true"
	if err := set(&yes); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := set(nil); err != nil {
			t.Errorf("removing the label %s of node %s: %v", label, node.Name, err)
		}
	})
}

// attemptsOf sums up status.history, newest first: action, revision, reason.
func attemptsOf(st api.Status) string {
	var out []string
	for _, a := range st.History {
		out = append(out, fmt.Sprintf("%s %d %s", a.Action, a.Revision, a.Reason))
	}
	return "[" + strings.Join(out, ", ") + "]"
}
