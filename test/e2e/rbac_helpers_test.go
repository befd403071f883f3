package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/cli"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// operatorKubeconfig returns a kubeconfig for a new ServiceAccount that has
// only what a deployed operator has: the generated ClusterRole for the
// watches (config/rbac/role.yaml itself for the repository's watches.yaml,
// generated the same way for the test watches) with the rules of
// config/rbac's metrics-auth-role (secure metrics), and the
// leader-election Role of config/rbac in its own namespace. Everything is removed at the
// end of the test.
func operatorKubeconfig(t *testing.T, env *testenv.Env, watchesFile string) string {
	t.Helper()
	return newOperatorIdentity(t, env, watchesFile).kubeconfig
}

// operatorIdentity is a ServiceAccount the operator runs as: its
// kubeconfig, and its namespace (where it may hold the leader Lease).
type operatorIdentity struct{ kubeconfig, namespace string }

// newOperatorIdentity makes the ServiceAccount of operatorKubeconfig.
func newOperatorIdentity(t *testing.T, env *testenv.Env, watchesFile string) operatorIdentity {
	t.Helper()
	ctx := context.Background()
	role := generatedRole(t, watchesFile)
	ns := env.Namespace(t)
	name := "chartkeeper-e2e-" + ns
	role.ObjectMeta = metav1.ObjectMeta{Name: name}
	role.Rules = append(role.Rules, configClusterRole(t, "metrics_auth_role.yaml").Rules...)
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "controller-manager", Namespace: ns}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
	}
	leader, leaderBinding := leaderElectionRBAC(t, ns, sa.Name)
	for _, obj := range []client.Object{role, sa, binding, leader, leaderBinding} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
		}
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), binding)
		_ = env.Client.Delete(context.Background(), role)
	})
	tok, err := env.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authv1.TokenRequest{
		Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(6 * 3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for the operator's ServiceAccount: %v", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: env.Config.Host, CertificateAuthority: env.Config.CAFile, CertificateAuthorityData: env.Config.CAData}
	cfg.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["operator"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "operator", Namespace: ns}
	cfg.CurrentContext = "operator"
	path := filepath.Join(t.TempDir(), "operator.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	// Wait until the API server's authorizer sees the binding.
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		return canList(ctx, env, ns, sa.Name, role)
	})
	return operatorIdentity{kubeconfig: path, namespace: ns}
}

// generatedRole is the ClusterRole make manifests writes for watchesFile.
func generatedRole(t *testing.T, watchesFile string) *rbacv1.ClusterRole {
	t.Helper()
	var b []byte
	if filepath.Clean(watchesFile) == filepath.Join(testenv.RepoRoot(), "watches.yaml") {
		var err error
		if b, err = os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "role.yaml")); err != nil {
			t.Fatal(err)
		}
	} else {
		files, _, err := cli.GenerateManifests(watchesFile, t.TempDir(), manifests.CRDOptions{})
		if err != nil {
			t.Fatalf("generating the role for %s: %v", watchesFile, err)
		}
		b = files[filepath.Join("rbac", "role.yaml")]
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(b, role); err != nil {
		t.Fatal(err)
	}
	for _, r := range role.Rules {
		for _, v := range append(append(append([]string{}, r.Verbs...), r.Resources...), r.APIGroups...) {
			if strings.Contains(v, "*") {
				t.Fatalf("the generated role grants %q: %+v", v, r)
			}
		}
	}
	return role
}

// leaderElectionRBAC is config/rbac/leader_election_role.yaml for ns.
func leaderElectionRBAC(t *testing.T, ns, sa string) (*rbacv1.Role, *rbacv1.RoleBinding) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", "leader_election_role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(string(b), "\n---\n")
	role, binding := &rbacv1.Role{}, &rbacv1.RoleBinding{}
	if len(docs) != 2 || yaml.Unmarshal([]byte(docs[0]), role) != nil || yaml.Unmarshal([]byte(docs[1]), binding) != nil {
		t.Fatalf("config/rbac/leader_election_role.yaml is not a Role and a RoleBinding")
	}
	role.Namespace, binding.Namespace = ns, ns
	binding.Subjects = []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}}
	return role, binding
}

// canList asks the authorizer whether the ServiceAccount may list the
// first resource of the role.
func canList(ctx context.Context, env *testenv.Env, ns, sa string, role *rbacv1.ClusterRole) error {
	r := role.Rules[0]
	review := &authorizationv1.SubjectAccessReview{}
	review.Spec.User = fmt.Sprintf("system:serviceaccount:%s:%s", ns, sa)
	review.Spec.ResourceAttributes = &authorizationv1.ResourceAttributes{Group: r.APIGroups[0], Resource: r.Resources[0], Verb: r.Verbs[0]}
	if err := env.Client.Create(ctx, review); err != nil {
		return err
	}
	if !review.Status.Allowed {
		return fmt.Errorf("%s may not yet %s %s", review.Spec.User, r.Verbs[0], r.Resources[0])
	}
	return nil
}

// configClusterRole reads a ClusterRole of config/rbac.
func configClusterRole(t *testing.T, file string) *rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "config", "rbac", file))
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(b, role); err != nil {
		t.Fatalf("config/rbac/%s: %v", file, err)
	}
	return role
}

// generatedReleaseRole is the release ClusterRole make manifests writes
// for the first watch of watchesFile, renamed with suffix so that a test's
// copy changes nothing another test binds.
func generatedReleaseRole(t *testing.T, watchesFile, suffix string) *rbacv1.ClusterRole {
	t.Helper()
	ws, err := watches.Load(watchesFile)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := cli.GenerateManifests(watchesFile, t.TempDir(), manifests.CRDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.ClusterRole{}
	file := filepath.Join("rbac", "release", manifests.ReleaseRoleFile(ws[0]))
	if err := yaml.UnmarshalStrict(files[file], role); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if role.Name != manifests.ReleaseRoleName(ws[0]) {
		t.Fatalf("%s names %q, want %q", file, role.Name, manifests.ReleaseRoleName(ws[0]))
	}
	role.Name += "-" + suffix
	return role
}
