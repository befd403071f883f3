package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A custom resource cannot make the operator write outside the release
// namespace, whatever its spec renders: not into another namespace, not a
// cluster-scoped object, not through a chart hook. The test watches leave
// scope unset (the default), and the operator runs under the generated
// ClusterRole, which would allow all three: the scope check stops them.
func TestScopeConfinesReleases(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	other := env.Namespace(t)
	ctx := context.Background()
	cases := []struct {
		name, want string
		spec       map[string]any
		created    func() error // nil error: the object exists (it must not)
	}{
		{"elsewhere", "objects outside the release namespace", map[string]any{"elsewhere": other}, func() error {
			return env.Client.Get(ctx, types.NamespacedName{Namespace: other, Name: "elsewhere-elsewhere"}, &corev1.ConfigMap{})
		}},
		{"clusterwide", "cluster-scoped objects are not allowed", map[string]any{"clusterRole": true}, func() error {
			return env.Client.Get(ctx, types.NamespacedName{Name: ns + "-clusterwide"}, &rbacv1.ClusterRole{})
		}},
		{"hooked", "objects outside the release namespace", map[string]any{"hookElsewhere": other}, func() error {
			return env.Client.Get(ctx, types.NamespacedName{Namespace: other, Name: "hooked-hook"}, &corev1.ConfigMap{})
		}},
	}
	for _, c := range cases {
		if err := env.Client.Create(ctx, newApp(ns, c.name, c.spec)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
			_, st, err := getApp(ctx, env, ns, c.name)
			if err != nil {
				return err
			}
			// A hook's violation fails a stored revision: it is retried
			// and remediated, then Stalled; each failure is an Event.
			if condition(st, api.ConditionStalled).Status != metav1.ConditionTrue {
				return fmt.Errorf("%s: not Stalled: %+v", c.name, st.Conditions)
			}
			for _, m := range append(eventMessages(ctx, t, env, ns, c.name), condition(st, api.ConditionStalled).Message) {
				if strings.Contains(m, c.want) {
					return nil
				}
			}
			return fmt.Errorf("%s: no condition or event says %q: %+v", c.name, c.want, st.Conditions)
		})
		if err := c.created(); !apierrors.IsNotFound(err) {
			t.Errorf("%s: the out-of-scope object was created (or cannot be read: %v)", c.name, err)
		}
	}
	// Manifest violations are caught before Helm stores anything.
	for _, name := range []string{"elsewhere", "clusterwide"} {
		if st := latestReleaseStatus(t, env, ns, name); st != "" {
			t.Errorf("%s: a release revision was stored (%s)", name, st)
		}
	}
	// Fixing the spec releases it.
	patchSpec(t, env, ns, "elsewhere", map[string]any{"elsewhere": ""})
	waitReady(t, env, ns, "elsewhere", 1)
}

// eventMessages returns the messages of the Events about an object in ns.
func eventMessages(ctx context.Context, t *testing.T, env *testenv.Env, ns, name string) []string {
	t.Helper()
	evs, err := env.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Message)
	}
	return out
}

// WATCH_NAMESPACE confines the operator: a custom resource in a namespace
// it does not name gets no finalizer, no status and no release, however
// long it waits.
func TestWatchNamespaceConfines(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	other := env.Namespace(t)
	ctx := context.Background()
	outside := newApp(other, "outside", map[string]any{"replicas": 1})
	if err := env.Client.Create(ctx, outside); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, newApp(ns, "inside", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "inside", 1)
	time.Sleep(2 * time.Second) // time for a wrong operator to pick the other one up
	u, st, err := getApp(ctx, env, other, "outside")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.GetFinalizers()) != 0 || len(st.Conditions) != 0 || len(releaseSecrets(t, env, other, "outside")) != 0 {
		t.Errorf("an App outside WATCH_NAMESPACE was touched: finalizers %v, status %+v, %d release Secrets",
			u.GetFinalizers(), st, len(releaseSecrets(t, env, other, "outside")))
	}
	if err := env.Client.Delete(ctx, outside); err != nil {
		t.Fatal(err)
	}
}
