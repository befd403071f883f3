package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// docs/multi-tenancy.md's third mode, impersonate with allowOverride: a
// resource's author may pick any account of the resource's own namespace
// (chartkeeper.dev/service-account), and no account of another namespace.
//
// The namespace's default account, chartkeeper-release, exists but is
// bound to nothing; shop-deployer is bound to the release ClusterRole. A
// TenantApp naming shop-deployer is released (only shop-deployer could
// have created its objects: the operator may not, and the default account
// may not either); one naming nothing is refused as chartkeeper-release;
// one naming shop-deployer of another namespace, where that account is
// bound too, is refused before anything is tried.
func TestImpersonationOverridePicksAnAccountOfTheNamespace(t *testing.T) {
	parallel(t, 20*time.Second)
	env := testenv.Cluster(t)
	ctx := context.Background()
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-impersonate-override.yaml")
	installCRDs(t, env, watchesFile)
	ns, other := env.Namespace(t), env.Namespace(t)
	releaseRole := generatedReleaseRole(t, watchesFile, ns)
	createAll(t, env, releaseRole)
	const picked = "shop-deployer"
	createAll(t, env, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: releaseAccount}})
	for _, n := range []string{ns, other} {
		createAll(t, env,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: picked}},
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: picked},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: releaseRole.Name},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: n, Name: picked}},
			})
	}
	pickedUser := "system:serviceaccount:" + ns + ":" + picked
	waitAllowed(t, env, pickedUser, "create", "apps", "deployments", ns, true)
	waitAllowed(t, env, saUser(ns), "create", "apps", "deployments", ns, false)

	startConfined(t, env, strings.Join([]string{ns, other}, ","), watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{tenantAppGVK}) })
	for name, account := range map[string]string{"picked": picked, "plain": "", "foreign": other + "/" + picked} {
		cr := newCR(tenantAppGVK, ns, name, map[string]any{"message": "hello"})
		if account != "" {
			cr.SetAnnotations(map[string]string{api.AnnotationServiceAccount: account})
		}
		if err := env.Client.Create(ctx, cr); err != nil {
			t.Fatal(err)
		}
	}

	// The picked account of the namespace: released, as that account.
	waitTenantReady(t, env, ns, "picked")
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "picked-tenantapp"}, &appsv1.Deployment{}); err != nil {
		t.Errorf("the release of the picked account: %v", err)
	}
	// No annotation: the watch's account, which may do nothing here.
	c := waitTenantFailed(t, env, ns, "plain", saUser(ns), "create", "serviceaccounts")
	t.Logf("no override: Ready False %s: %s", c.Reason, c.Message)
	// An account of another namespace: refused before anything is tried.
	c = waitTenantCondition(t, env, ns, "foreign", func(c metav1.Condition) error {
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonServiceAccountRefused) || !strings.Contains(c.Message, other) {
			return fmt.Errorf("want Ready False %s naming %s, got %s: %s", api.ReasonServiceAccountRefused, other, c.Reason, c.Message)
		}
		return nil
	})
	t.Logf("an account of another namespace: Ready False %s: %s", c.Reason, c.Message)
	if revs := releaseSecrets(t, env, ns, "foreign"); len(revs) != 0 {
		t.Errorf("the refused override released %d revisions", len(revs))
	}
}
