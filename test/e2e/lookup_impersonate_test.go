package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var impersonatedLookupAppGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "ImpersonatedLookupApp"}

// Under impersonate, a chart's lookup reads as the release's account, in
// an install and in a plan's render: the account may read Secret "local"
// of its namespace and no other. A lookup of "local" reads it; a lookup
// of "private", in the same namespace (which the operator itself may
// read), fails the install, and a change that looks it up fails the plan,
// each naming the account.
func TestLookupReadsAsTheImpersonatedAccount(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	ctx := context.Background()
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-lookup-impersonate.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	releaseRole := generatedReleaseRole(t, watchesFile, ns)
	account := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: releaseAccount}}
	createAll(t, env, releaseRole,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: releaseAccount}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: releaseRole.Name}, Subjects: account},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-local"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"local"}, Verbs: []string{"get"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-local"},
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-local"}, Subjects: account},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "local"}, StringData: map[string]string{"token": localToken}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "private"}, StringData: map[string]string{"token": otherToken}})
	user := saUser(ns)
	waitAllowed(t, env, user, "create", "", "configmaps", ns, true)
	startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{impersonatedLookupAppGVK}) })

	lookupOf := func(secret string) map[string]any {
		return map[string]any{"extraEnvVars": []any{map[string]any{"name": "TOKEN", "value": secretLookup(ns, secret)}}}
	}
	for name, secret := range map[string]string{"web": "local", "private": "private"} {
		if err := env.Client.Create(ctx, newCR(impersonatedLookupAppGVK, ns, name, lookupOf(secret))); err != nil {
			t.Fatal(err)
		}
	}
	refused := fmt.Sprintf(`User %q cannot get resource "secrets"`, user)
	waitCRReady(t, env, impersonatedLookupAppGVK, ns, "web")
	if got, want := settings(t, env, ns, "web")["TOKEN"], base64.StdEncoding.EncodeToString([]byte(localToken)); got != want {
		t.Errorf("a lookup of Secret %s/local as the account read %q, want %q", ns, got, want)
	}
	waitLookupRefused(t, env, ns, "private", api.ConditionReady, refused)

	// The plan's render reads as the account too.
	patchCR(t, env, impersonatedLookupAppGVK, ns, "web", lookupOf("private"))
	waitLookupRefused(t, env, ns, "web", api.ConditionPlanReady, refused)
}

// waitLookupRefused waits until an ImpersonatedLookupApp's condition typ
// is False for its generation, its message saying what.
func waitLookupRefused(t *testing.T, env *testenv.Env, ns, name, typ, what string) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, impersonatedLookupAppGVK, ns, name)
		if err != nil {
			return err
		}
		c := condition(st, typ)
		if st.ObservedGeneration != u.GetGeneration() || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, what) {
			return fmt.Errorf("want %s False saying %q at generation %d: %+v", typ, what, u.GetGeneration(), st.Conditions)
		}
		return nil
	})
}
