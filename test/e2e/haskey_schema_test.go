package e2e

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// An ingress-controller chart without values.schema.json
// (test/corpus/ingress-router) keeps everything about its controller
// under one `controller` key, and its PodDisruptionBudget asks `hasKey
// .Values.controller "maxUnavailable"`; its other templates read the
// subtree field by field. Packaged with create-api, its CRD types the
// subtree's scalars from values.yaml: on the real API server, kubectl
// apply of `controller.replicaCount: "two"` is refused naming
// spec.controller.replicaCount, instead of being admitted and failing
// inside Helm. A custom resource with right types is admitted, with the
// key hasKey asks for (commented out in values.yaml) kept, of any type, and
// the maps the templates pass on whole taking any content.
func TestHasKeySubtreeIsTyped(t *testing.T) {
	// Its one cluster-scoped object is the CRD
	// ingressrouters.foreign.chartkeeper.dev, which no other test makes
	// (the corpus walk's IngressRouter is of its own group); it runs no
	// operator.
	parallel(t, quick)
	env := testenv.Cluster(t)
	ctx := context.Background()
	_, gvk, ns := foreignCRD(t, env, "ingress-router", "IngressRouter")
	t.Cleanup(func() {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		_ = env.Client.DeleteAllOf(context.Background(), u, client.InNamespace(ns))
	})

	wrong := "apiVersion: " + foreignGroup + "/v1alpha1\nkind: IngressRouter\nmetadata:\n  name: wrongtype\n  namespace: " + ns +
		"\nspec:\n  controller:\n    replicaCount: \"two\"\n"
	out, err := kubectlApply(t, env, wrong)
	if err == nil {
		t.Errorf("kubectl apply of controller.replicaCount: \"two\" was admitted (want it refused naming spec.controller.replicaCount):\n%s", out)
	} else if !strings.Contains(out, "spec.controller.replicaCount") || !strings.Contains(out, "integer") {
		t.Errorf("kubectl apply of controller.replicaCount: \"two\" was refused without naming spec.controller.replicaCount and its type:\n%s", out)
	}

	right := "apiVersion: " + foreignGroup + "/v1alpha1\nkind: IngressRouter\nmetadata:\n  name: right\n  namespace: " + ns + `
spec:
  controller:
    replicaCount: 3
    maxUnavailable: 50%
    image: {tag: "1.11.3"}
    config: {ssl-protocols: TLSv1.3}
    resources: {limits: {memory: 1Gi}}
    service: {ports: {http: 8080}}
`
	if out, err := kubectlApply(t, env, right); err != nil {
		t.Fatalf("kubectl apply of a custom resource with right types was refused: %v\n%s", err, out)
	}
	got := &unstructured.Unstructured{}
	got.SetGroupVersionKind(gvk)
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "right"}, got); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]any{
		"controller.replicaCount":            int64(3),
		"controller.maxUnavailable":          "50%",
		"controller.config.ssl-protocols":    "TLSv1.3",
		"controller.resources.limits.memory": "1Gi",
		"controller.service.ports.http":      int64(8080),
	} {
		v, found, _ := unstructured.NestedFieldNoCopy(got.Object, append([]string{"spec"}, strings.Split(path, ".")...)...)
		if !found || v != want {
			t.Errorf("spec.%s = %v (found %v), want %v: the API server changed or dropped it", path, v, found, want)
		}
	}
}

// kubectlApply runs bin/kubectl apply (strict field validation, its
// default) on manifest and returns its combined output and error.
func kubectlApply(t *testing.T, env *testenv.Env, manifest string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(testenv.BinDir(), "kubectl"), "--kubeconfig", env.Kubeconfig, "--cache-dir", t.TempDir(), "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}
