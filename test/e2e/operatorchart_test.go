package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The generated operator chart (config/chart/chartkeeper) installs with
// bin/helm into the cluster: the API server accepts its CRDs, RBAC and the
// manager Deployment, rendered with the values given (image, log level,
// watched namespaces) and config's security context; helm uninstall
// removes them and keeps the CRDs (crd.keep). The image is never pulled
// (kwok runs the Pod): the objects are what is tested.
func TestOperatorChartInstalls(t *testing.T) {
	env := testenv.Cluster(t)
	ctx := context.Background()
	const release, ns = "chartkeeper", "chartkeeper-helm"
	helm := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(testenv.BinDir(), "helm"), append([]string{"--kubeconfig", env.Kubeconfig, "-n", ns}, args...)...)
		cmd.Dir = testenv.RepoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	crdNames := []string{"webapps.apps.chartkeeper.dev", "etcdclusters.apps.chartkeeper.dev"}
	adoptCRDs(t, env, crdNames, release, ns)
	helm("install", release, "config/chart/chartkeeper", "--create-namespace",
		"--set", "image.repository=registry.example/chartkeeper", "--set", "image.tag=e2e",
		"--set", "logLevel=debug", "--set", "watchNamespaces={team-a,team-b}")
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			helm("uninstall", release, "--wait")
		}
		if err := env.Client.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsNotFound(err) {
			t.Error(err)
		}
	})

	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + "-controller-manager"}, &d); err != nil {
		t.Fatal(err)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if c.Image != "registry.example/chartkeeper:e2e" {
		t.Errorf("image %q", c.Image)
	}
	for _, want := range []string{"--zap-log-level=debug", "--leader-elect=true", "--metrics-bind-address=:8443", "--metrics-secure"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %s", c.Args, want)
		}
	}
	if i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "WATCH_NAMESPACE" }); i < 0 || c.Env[i].Value != "team-a,team-b" {
		t.Errorf("env %v: WATCH_NAMESPACE is not team-a,team-b", c.Env)
	}
	sc, psc := c.SecurityContext, d.Spec.Template.Spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("security context: pod %+v, container %+v", psc, sc)
	}
	if d.Spec.Template.Spec.ServiceAccountName != release+"-controller-manager" {
		t.Errorf("service account %q", d.Spec.Template.Spec.ServiceAccountName)
	}
	var role rbacv1.ClusterRole
	if err := env.Client.Get(ctx, client.ObjectKey{Name: release + "-manager-role"}, &role); err != nil || len(role.Rules) == 0 {
		t.Errorf("manager ClusterRole: %v (%d rules)", err, len(role.Rules))
	}
	var le rbacv1.Role
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + "-leader-election"}, &le); err != nil {
		t.Errorf("leader-election Role: %v", err)
	}
	for _, name := range crdNames {
		var crd apiextv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Errorf("CRD %s: %v", name, err)
		} else if crd.Annotations["meta.helm.sh/release-name"] != release {
			t.Errorf("CRD %s is not the release's: %v", name, crd.Annotations)
		}
	}

	out := helm("uninstall", release, "--wait")
	uninstalled = true
	if !strings.Contains(out, "uninstalled") {
		t.Errorf("helm uninstall: %s", out)
	}
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: release + "-controller-manager"}, &d); err == nil {
		t.Error("the Deployment is left after helm uninstall")
	}
	for _, name := range crdNames {
		var crd apiextv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
			t.Errorf("CRD %s not kept on uninstall: %v", name, err)
		}
	}
}

// adoptCRDs lets the release adopt the CRDs that other tests installed
// already (as a user would before moving to the chart): Helm takes over an
// object with its release's annotations and managed-by label.
func adoptCRDs(t *testing.T, env *testenv.Env, names []string, release, ns string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range names {
		var crd apiextv1.CustomResourceDefinition
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, &crd); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		patch := client.MergeFrom(crd.DeepCopy())
		if crd.Annotations == nil {
			crd.Annotations = map[string]string{}
		}
		if crd.Labels == nil {
			crd.Labels = map[string]string{}
		}
		crd.Annotations["meta.helm.sh/release-name"], crd.Annotations["meta.helm.sh/release-namespace"] = release, ns
		crd.Labels["app.kubernetes.io/managed-by"] = "Helm"
		if err := env.Client.Patch(ctx, &crd, patch); err != nil {
			t.Fatal(err)
		}
	}
}
