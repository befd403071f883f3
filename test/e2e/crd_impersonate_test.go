package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/cli"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Under impersonate, a templated CRD is applied as the release's account,
// not the operator: an account bound to the release role in its namespace
// only may not create it (Forbidden, naming the account; the CRD is not
// created); the release role's CRD rules granted cluster-wide heal it.
func TestTemplatedCRDAsReleaseAccount(t *testing.T) {
	f := newCRDFixture(t, "create", "  scope: {clusterScoped: true}\n  impersonate: {serviceAccount: \"{{ .Namespace }}/"+releaseAccount+"\"}\n", nil)
	ctx := context.Background()
	ws, err := watches.Load(f.watches)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := cli.GenerateManifests(f.watches, t.TempDir(), manifests.CRDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(files[filepath.Join("rbac", "release", manifests.ReleaseRoleFile(ws[0]))], role); err != nil {
		t.Fatal(err)
	}
	role.Name += "-" + f.ns
	var crdRules []rbacv1.PolicyRule
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "customresourcedefinitions") {
			crdRules = append(crdRules, r)
		}
	}
	if len(crdRules) == 0 {
		t.Errorf("the release role has no rule on the templated CRD: %+v", role.Rules)
		crdRules = []rbacv1.PolicyRule{{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"create", "get"}}}
	}
	createAll(t, f.env, role,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: releaseAccount}},
		&rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "chartkeeper-release-certissuers"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: f.ns, Name: releaseAccount}},
		})
	// Uninstalled as the account, before its rights go (cleanups run last first).
	t.Cleanup(func() { deleteAll(t, f.env, f.ns, []schema.GroupVersionKind{certIssuerGVK}) })
	user := saUser(f.ns)
	waitAllowed(t, f.env, user, "create", "apps", "deployments", f.ns, true)

	f.create("certs", map[string]any{})
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, f.env, certIssuerGVK, f.ns, "certs")
		if err != nil {
			return err
		}
		c := condition(st, api.ConditionReady)
		if c.Reason != string(api.ReasonForbidden) || !strings.Contains(c.Message, "ServiceAccount "+f.ns+"/"+releaseAccount) || !strings.Contains(c.Message, "customresourcedefinitions") {
			return fmt.Errorf("Ready %+v, want Forbidden naming the account and customresourcedefinitions", c)
		}
		return nil
	})
	if _, err := getCRD(ctx, f.env, certificateCRD); !apierrors.IsNotFound(err) {
		t.Fatalf("the templated CRD %s was created although the release's account may not (%v)", certificateCRD, err)
	}

	wide := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "certissuer-crds-" + f.ns}, Rules: crdRules}
	createAll(t, f.env, wide, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: wide.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: wide.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: f.ns, Name: releaseAccount}},
	})
	f.waitRevision("certs", 1)
	if _, err := getCRD(ctx, f.env, certificateCRD); err != nil {
		t.Errorf("the templated CRD %s: %v", certificateCRD, err)
	}
}
