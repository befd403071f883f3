package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var tenantAppGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "TenantApp"}

// releaseAccount is the ServiceAccount of watches-impersonate.yaml's
// template, in each namespace.
const releaseAccount = "chartkeeper-release"

// docs/multi-tenancy.md, end to end: TenantApp releases run as the
// ServiceAccount chartkeeper-release of their namespace
// (watches-impersonate.yaml), and the operator itself runs with its
// generated ClusterRole, which holds no right to write a released kind,
// only to read them and to impersonate the account: every object created,
// corrected or deleted below was so by an account.
//
// Team A's account is bound (RoleBinding) to the generated release
// ClusterRole only: a TenantApp whose values render a ClusterRoleBinding
// (rbac.clusterWide) is refused, the condition naming the account, the
// verb and the resource, and nothing cluster-wide is made; the same chart
// without it installs, and a deleted object of it is put back. Team B's
// account may also bind system:auth-delegator cluster-wide: there the
// same TenantApp installs, ClusterRoleBinding included. A namespace
// without the account, and a resource naming another account where the
// watch allows none, are refused with a clear condition. Deleting the
// resources uninstalls their releases, ClusterRoleBinding included.
//
// Without impersonate nothing changes: every other e2e test runs its
// watches without it, under the same generated RBAC (operatorKubeconfig),
// e.g. TestReleaseLifecycle, TestBuiltInHooksThroughTheOperator,
// TestValuesFromConfigMapsAndSecrets, and TestScopeConfinesReleases for a
// chart's cluster-scoped objects.
func TestImpersonatedReleases(t *testing.T) {
	parallel(t, 25*time.Second)
	env := testenv.Cluster(t)
	ctx := context.Background()
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-impersonate.yaml")
	installCRDs(t, env, watchesFile)

	// What make manifests writes: the operator's ClusterRole and the
	// release ClusterRole of the kind.
	wantOperatorRoleOnlyReads(t, generatedRole(t, watchesFile))
	nsA, nsB, nsC := env.Namespace(t), env.Namespace(t), env.Namespace(t)
	// The release role is cluster-scoped: a name of this test's own, so
	// that nothing else's copy is changed.
	releaseRole := generatedReleaseRole(t, watchesFile, nsA)
	createAll(t, env, releaseRole)

	// Teams A and B: the account, bound in its namespace to the release
	// role, as the role's file says. B's may also bind the one ClusterRole
	// the chart binds, cluster-wide (the API server's escalation check:
	// who binds a role must hold it or have bind on it).
	for _, ns := range []string{nsA, nsB} {
		createAll(t, env,
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: releaseAccount}},
			&rbacv1.RoleBinding{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chartkeeper-release-tenantapps"},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: releaseRole.Name},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: releaseAccount}},
			})
	}
	clusterWide := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tenantapp-cluster-wide-" + nsB},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterrolebindings"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
			{APIGroups: []string{rbacv1.GroupName}, Resources: []string{"clusterroles"}, ResourceNames: []string{"system:auth-delegator"}, Verbs: []string{"bind"}},
		},
	}
	createAll(t, env, clusterWide, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: clusterWide.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: clusterWide.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: nsB, Name: releaseAccount}},
	})
	userA, userB, userC := saUser(nsA), saUser(nsB), saUser(nsC)
	waitAllowed(t, env, userA, "create", "apps", "deployments", nsA, true)
	waitAllowed(t, env, userB, "create", rbacv1.GroupName, "clusterrolebindings", "", true)
	waitAllowed(t, env, userA, "create", rbacv1.GroupName, "clusterrolebindings", "", false)

	startConfined(t, env, strings.Join([]string{nsA, nsB, nsC}, ","), watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() {
		for _, ns := range []string{nsA, nsB, nsC} {
			deleteAll(t, env, ns, []schema.GroupVersionKind{tenantAppGVK})
		}
	})
	for _, cr := range []struct{ ns, name string }{{nsA, "wide"}, {nsB, "wide"}, {nsA, "narrow"}, {nsC, "orphan"}} {
		spec := map[string]any{"message": "hello from " + cr.ns}
		if cr.name == "wide" {
			spec["rbac"] = map[string]any{"clusterWide": true}
		}
		if err := env.Client.Create(ctx, newCR(tenantAppGVK, cr.ns, cr.name, spec)); err != nil {
			t.Fatal(err)
		}
	}
	override := newCR(tenantAppGVK, nsA, "override", map[string]any{})
	override.SetAnnotations(map[string]string{api.AnnotationServiceAccount: "default"})
	if err := env.Client.Create(ctx, override); err != nil {
		t.Fatal(err)
	}

	// 1. Team B: the ClusterRoleBinding is released, as B's account.
	waitTenantReady(t, env, nsB, "wide")
	crbB := &rbacv1.ClusterRoleBinding{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: nsB + "-wide-tenantapp"}, crbB); err != nil {
		t.Fatalf("team B's ClusterRoleBinding: %v", err)
	}
	if crbB.RoleRef.Name != "system:auth-delegator" {
		t.Errorf("team B's ClusterRoleBinding binds %q", crbB.RoleRef.Name)
	}

	// 2. Team A, same values: refused by A's account's RBAC. The verb is
	// create: the install creates each object without reading it first,
	// and that create is refused; what it made before is deleted again and
	// no revision is stored, as when Helm's read before the create was
	// refused.
	c := waitTenantFailed(t, env, nsA, "wide", userA, "create", "clusterrolebindings.rbac.authorization.k8s.io")
	t.Logf("team A's clusterWide TenantApp: Ready False %s: %s", c.Reason, c.Message)
	for _, obj := range []client.Object{
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: nsA + "-wide-tenantapp"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "wide-tenantapp"}},
	} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("team A's refused release: %T %s: want not found, got %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
	// Each retry stores its revision pending before its first create, and
	// removes it when refused: none stays.
	testenv.Eventually(t, 30*time.Second, func(context.Context) error {
		if revs := releaseSecrets(t, env, nsA, "wide"); len(revs) > 0 {
			return fmt.Errorf("team A's refused release holds %d revisions, want none", len(revs))
		}
		return nil
	})

	// 3. Team A without the ClusterRoleBinding: installed, and kept as
	// released (drift correction, as A's account: the operator may not
	// create a ConfigMap). Turning the ClusterRoleBinding on later is
	// refused the same way, the release left as it was; off again, Ready.
	waitTenantReady(t, env, nsA, "narrow")
	for _, obj := range []client.Object{&appsv1.Deployment{}, &corev1.ConfigMap{}, &corev1.ServiceAccount{}, &rbacv1.Role{}, &rbacv1.RoleBinding{}} {
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "narrow-tenantapp"}, obj); err != nil {
			t.Errorf("team A's release: %T: %v", obj, err)
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "narrow-tenantapp"}}
	if err := env.Client.Delete(ctx, cm); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		return env.Client.Get(ctx, client.ObjectKeyFromObject(cm), &corev1.ConfigMap{})
	})
	patchCR(t, env, tenantAppGVK, nsA, "narrow", map[string]any{"rbac": map[string]any{"clusterWide": true}})
	c = waitTenantFailed(t, env, nsA, "narrow", userA, "get", "clusterrolebindings.rbac.authorization.k8s.io")
	t.Logf("team A's upgrade to clusterWide: Ready False %s: %s", c.Reason, c.Message)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: nsA, Name: "narrow-tenantapp"}, &appsv1.Deployment{}); err != nil {
		t.Errorf("team A's release after the refused upgrade: %v", err)
	}
	patchCR(t, env, tenantAppGVK, nsA, "narrow", map[string]any{"rbac": map[string]any{"clusterWide": false}})
	waitTenantReady(t, env, nsA, "narrow")

	// 4. No account in the namespace: nothing is released, and the
	// condition names the account.
	c = waitTenantFailed(t, env, nsC, "orphan", userC, "create", "serviceaccounts")
	t.Logf("a namespace without the account: Ready False %s: %s", c.Reason, c.Message)

	// 5. Another account named where the watch allows none: refused
	// before anything is tried.
	c = waitTenantCondition(t, env, nsA, "override", func(c metav1.Condition) error {
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonServiceAccountRefused) ||
			!strings.Contains(c.Message, `"default"`) || !strings.Contains(c.Message, "impersonate.allowOverride") {
			return fmt.Errorf("want Ready False %s naming the account and allowOverride, got %s: %s", api.ReasonServiceAccountRefused, c.Reason, c.Message)
		}
		return nil
	})
	t.Logf("an override the watch does not allow: Ready False %s: %s", c.Reason, c.Message)
	if revs := releaseSecrets(t, env, nsA, "override"); len(revs) != 0 {
		t.Errorf("the refused override released %d revisions", len(revs))
	}

	// 6. Deleting uninstalls, as the accounts: B's ClusterRoleBinding too.
	for _, cr := range []struct{ ns, name string }{{nsB, "wide"}, {nsA, "narrow"}} {
		if err := env.Client.Delete(ctx, newCR(tenantAppGVK, cr.ns, cr.name, nil)); err != nil {
			t.Fatal(err)
		}
		waitGone(t, env, tenantAppGVK, cr.ns, cr.name, 2*time.Minute)
	}
	for _, obj := range []client.Object{
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: nsB + "-wide-tenantapp"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "wide-tenantapp"}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "narrow-tenantapp"}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "narrow-tenantapp"}},
	} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); !apierrors.IsNotFound(err) {
			t.Errorf("%T %s after the uninstall: want not found, got %v", obj, client.ObjectKeyFromObject(obj), err)
		}
	}
}

// wantOperatorRoleOnlyReads checks the operator's generated ClusterRole
// for an impersonating watch: impersonate on ServiceAccounts, and no
// write to any kind the chart releases (only Secrets, its release
// storage, Events, and its own kind's status).
func wantOperatorRoleOnlyReads(t *testing.T, role *rbacv1.ClusterRole) {
	t.Helper()
	impersonate := false
	for _, r := range role.Rules {
		if slices.Contains(r.Verbs, "impersonate") {
			impersonate = slices.Equal(r.Resources, []string{"serviceaccounts"}) && slices.Equal(r.Verbs, []string{"impersonate"})
			continue
		}
		for _, res := range r.Resources {
			switch res {
			case "deployments", "configmaps", "serviceaccounts", "roles", "rolebindings", "clusterrolebindings", "clusterroles":
				for _, v := range r.Verbs {
					if v != "get" && v != "list" && v != "watch" {
						t.Errorf("the operator's ClusterRole lets it %s %s: %+v", v, res, r)
					}
				}
			}
		}
	}
	if !impersonate {
		t.Errorf("the operator's ClusterRole has no rule impersonating serviceaccounts alone: %+v", role.Rules)
	}
}

// createAll creates objects, deleted at the end of the test (the
// namespaced ones go with their namespace anyway).
func createAll(t *testing.T, env *testenv.Env, objs ...client.Object) {
	t.Helper()
	for _, obj := range objs {
		if err := env.Client.Create(context.Background(), obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), obj) })
	}
}

// saUser is the user name of the release account of ns.
func saUser(ns string) string { return "system:serviceaccount:" + ns + ":" + releaseAccount }

// waitAllowed waits until the authorizer says allowed for user's verb on
// resource in ns ("": cluster-wide).
func waitAllowed(t *testing.T, env *testenv.Env, user, verb, group, resource, ns string, allowed bool) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource}}}
		if err := env.Client.Create(ctx, review); err != nil {
			return err
		}
		if review.Status.Allowed != allowed {
			return fmt.Errorf("%s may %s %s in %q: %v, want %v", user, verb, resource, ns, review.Status.Allowed, allowed)
		}
		return nil
	})
}

// waitTenantCondition waits until the TenantApp's Ready condition, for its
// generation, passes ok, and returns it.
func waitTenantCondition(t *testing.T, env *testenv.Env, ns, name string, ok func(metav1.Condition) error) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, tenantAppGVK, ns, name)
		if err != nil {
			return err
		}
		c = condition(st, api.ConditionReady)
		if st.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("TenantApp %s/%s: generation %d not observed: %+v", ns, name, u.GetGeneration(), st.Conditions)
		}
		if err := ok(c); err != nil {
			return fmt.Errorf("TenantApp %s/%s: %w", ns, name, err)
		}
		return nil
	})
	return c
}

// waitTenantReady waits until the TenantApp is Ready.
func waitTenantReady(t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	waitTenantCondition(t, env, ns, name, func(c metav1.Condition) error {
		if c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not Ready: %s: %s", c.Reason, c.Message)
		}
		return nil
	})
}

// waitTenantFailed waits until the TenantApp is Ready False Forbidden (the
// install refused before Helm stored anything: retried after the backoff)
// with a message naming the account user, its ServiceAccount, the verb
// and the resource.
func waitTenantFailed(t *testing.T, env *testenv.Env, ns, name, user, verb, resource string) metav1.Condition {
	t.Helper()
	sa := "ServiceAccount " + strings.Replace(strings.TrimPrefix(user, "system:serviceaccount:"), ":", "/", 1)
	want := fmt.Sprintf("the release runs as %s, which may not %s %s: ", sa, verb, resource)
	return waitTenantCondition(t, env, ns, name, func(c metav1.Condition) error {
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonForbidden) || !strings.Contains(c.Message, want) ||
			!strings.Contains(c.Message, fmt.Sprintf(`User %q cannot %s resource`, user, verb)) {
			return fmt.Errorf("want Ready False %s saying %q, got %s: %s", api.ReasonForbidden, want, c.Reason, c.Message)
		}
		return nil
	})
}
