package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The API server's escalation check refuses a Role that grants what the
// account creating it does not hold ("is attempting to grant RBAC
// permissions not currently held"). Under impersonation that refusal is
// the account's RBAC's, like a refused create: a TenantApp whose Role
// would let the app read Secrets, in a namespace whose account may not,
// is Ready False Forbidden, naming the account; it is retried after the
// backoff without counting against remediation.retries (never Stalled,
// however many attempts), and nothing of it stays. Once the account is
// granted the right, the resource becomes Ready without anyone touching
// it.
func TestEscalationRefusalHealsWithTheGrant(t *testing.T) {
	parallel(t, 20*time.Second)
	env := testenv.Cluster(t)
	ctx := context.Background()
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-impersonate.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	tenantAccount(t, env, watchesFile, ns)
	user := saUser(ns)
	waitAllowed(t, env, user, "create", rbacv1.GroupName, "roles", ns, true)
	waitAllowed(t, env, user, "get", "", "secrets", ns, false)

	startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{tenantAppGVK}) })
	cr := newCR(tenantAppGVK, ns, "reader", map[string]any{"rbac": map[string]any{"extraRules": []any{
		map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get", "list"}}}}})
	if err := env.Client.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	generation := cr.GetGeneration()

	sa := "ServiceAccount " + ns + "/" + releaseAccount
	refused := func(c metav1.Condition) error {
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonForbidden) ||
			!strings.Contains(c.Message, "the release runs as "+sa) ||
			!strings.Contains(c.Message, "is attempting to grant RBAC permissions not currently held") {
			return fmt.Errorf("want Ready False %s naming %s and the escalation check, got %s: %s", api.ReasonForbidden, sa, c.Reason, c.Message)
		}
		return nil
	}
	c := waitTenantCondition(t, env, ns, "reader", refused)
	t.Logf("the Role the account may not grant: Ready False %s: %s", c.Reason, c.Message)

	// Attempt after attempt (retries: 1, backoff 1s to 2s), still
	// Forbidden, none counted, nothing stored.
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, tenantAppGVK, ns, "reader")
		if err != nil {
			return err
		}
		if s := condition(st, api.ConditionStalled); s.Status == metav1.ConditionTrue {
			t.Fatalf("the refused release stalled: %s: %s", s.Reason, s.Message)
		}
		if st.Failures != 0 {
			t.Fatalf("the refusal was counted: failures %d (%s)", st.Failures, st.LastFailureMessage)
		}
		if err := refused(condition(st, api.ConditionReady)); err != nil {
			return err
		}
		attempts := 0
		for _, m := range eventMessages(ctx, t, env, ns, "reader") {
			if strings.Contains(m, "is attempting to grant RBAC permissions not currently held") {
				attempts++
			}
		}
		if attempts < 4 {
			return fmt.Errorf("%d refused attempts so far, want 4", attempts)
		}
		return nil
	})
	if revs := releaseSecrets(t, env, ns, "reader"); len(revs) != 0 {
		t.Errorf("the refused release holds %d revisions, want none", len(revs))
	}

	// The grant: the account may now read Secrets. The next attempt
	// installs, without a change or a request on the resource.
	createAll(t, env,
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "read-secrets"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get", "list"}}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "release-reads-secrets"},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "read-secrets"},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: releaseAccount}}})
	waitTenantReady(t, env, ns, "reader")
	u, _, err := getCR(ctx, env, tenantAppGVK, ns, "reader")
	if err != nil {
		t.Fatal(err)
	}
	if u.GetGeneration() != generation || u.GetAnnotations()[api.AnnotationReconcileRequestedAt] != "" {
		t.Errorf("the resource was touched: generation %d (created at %d), annotations %v", u.GetGeneration(), generation, u.GetAnnotations())
	}
	role := &rbacv1.Role{}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "reader-tenantapp"}, role); err != nil || len(role.Rules) != 2 {
		t.Errorf("the released Role: %v %+v", err, role.Rules)
	}
}

// tenantAccount makes the release account of watches-impersonate.yaml in
// ns, bound to (this namespace's copy of) the release ClusterRole that
// make manifests writes for the kind, and nothing more.
func tenantAccount(t *testing.T, env *testenv.Env, watchesFile, ns string) {
	t.Helper()
	releaseRole := generatedReleaseRole(t, watchesFile, ns)
	createAll(t, env, releaseRole,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: releaseAccount}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "chartkeeper-release-tenantapps"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: releaseRole.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: releaseAccount}},
		})
}
