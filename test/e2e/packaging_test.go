package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

const foreignGroup = "foreign.chartkeeper.dev"

// packagedGroup is TestPackagedForeignCharts' own group: its CRDs (Demo,
// Memcached, ...) are created and deleted by that test alone, none shared
// with another test's (TestCRDSchemaUpgrade's Memcached is foreignGroup's).
const packagedGroup = "packaged.foreign.chartkeeper.dev"

// foreignKind is a chart not written for chartkeeper, packaged as a kind.
type foreignKind struct {
	kind, chart string
	bad         map[string]any // a spec the chart's schema refuses
	badField    string         // the field the API server names
}

func foreignKinds(t *testing.T) []foreignKind {
	dir := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "foreign")
	// The subchart one goes in as a .tgz, as charts are often shipped.
	ch, err := loader.Load(filepath.Join(dir, "helm-chart-with-schema-and-subchart"))
	if err != nil {
		t.Fatal(err)
	}
	tgz, err := chartutil.Save(ch, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return []foreignKind{
		{"Demo", filepath.Join(dir, "helm-create-demo"), map[string]any{"replicaCount": "two"}, "spec.replicaCount"},
		{"Memcached", filepath.Join(dir, "memcached"), map[string]any{"service": map[string]any{"type": "Magic"}}, "spec.service.type"},
		{"Person", filepath.Join(dir, "helm-chart-with-schema"), map[string]any{"age": -1}, "spec.age"},
		{"Family", tgz, map[string]any{"lastname": "Doe", "subchart-with-schema": map[string]any{"age": -5}}, "spec.subchart-with-schema.age"},
	}
}

// Four charts not written for chartkeeper are packaged with create-api
// (twice: the second run changes nothing), their CRDs are accepted by the
// API server and refuse what the charts' schemas refuse, and each sample
// becomes Ready under an operator that runs with only the generated role
// and relocates every image to a mirror with a pull secret. The kinds
// are the test's own (packagedGroup) and its operator is confined to its
// namespace (WATCH_NAMESPACE).
func TestPackagedForeignCharts(t *testing.T) {
	parallel(t, 25*time.Second)
	env := testenv.Cluster(t)
	ctx := context.Background()
	proj := t.TempDir()
	kinds := foreignKinds(t)

	for round := 1; round <= 2; round++ {
		before := treeDigest(t, proj)
		for _, k := range kinds {
			out := chartkeeper(t, 0, "create-api", "--chart", k.chart, "--group", packagedGroup, "--version", "v1alpha1",
				"--kind", k.kind, "--project-dir", proj)
			if round == 2 && (strings.Contains(out, "created") || strings.Contains(out, "updated")) {
				t.Errorf("second create-api of %s changed files:\n%s", k.kind, out)
			}
		}
		if round == 2 && treeDigest(t, proj) != before {
			t.Errorf("the second round of create-api changed the project")
		}
	}
	chartkeeper(t, 0, "manifests", "--check", "--watches-file", filepath.Join(proj, "watches.yaml"), "--config-dir", filepath.Join(proj, "config"))

	crds := applyCRDs(t, env, filepath.Join(proj, "config", "crd", "bases"))
	ns := env.Namespace(t)
	for _, k := range kinds {
		gvk := schema.GroupVersionKind{Group: packagedGroup, Version: "v1alpha1", Kind: k.kind}
		err := env.Client.Create(ctx, newCR(gvk, ns, "bad", k.bad))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), k.badField) {
			t.Errorf("%s: the API server took %v (want it refused naming %s): %v", k.kind, k.bad, k.badField, err)
		}
	}

	const mirror = "mirror.e2e.local:5000/hub"
	startConfined(t, env, ns, filepath.Join(proj, "watches.yaml"), "--metrics-bind-address", "0",
		"--image-registry", mirror, "--image-pull-secret", "mirror-pull")
	t.Cleanup(func() { deleteAll(t, env, ns, crds) })
	samples := readSampleCRs(t, filepath.Join(proj, "config", "samples"))
	for _, s := range samples {
		s.SetNamespace(ns)
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatalf("creating the sample %s: %v", s.GetKind(), err)
		}
	}
	for _, s := range samples {
		waitCRReady(t, env, s.GroupVersionKind(), ns, s.GetName())
	}

	// Every released Pod pulls from the mirror with the pull secret.
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) < 2 {
		t.Fatalf("want the Pods of Demo and Memcached, got %d", len(pods.Items))
	}
	for _, p := range pods.Items {
		for _, c := range append(p.Spec.InitContainers, p.Spec.Containers...) {
			if !strings.HasPrefix(c.Image, mirror+"/") {
				t.Errorf("Pod %s runs %s, not from %s", p.Name, c.Image, mirror)
			}
		}
		if len(p.Spec.ImagePullSecrets) == 0 || p.Spec.ImagePullSecrets[len(p.Spec.ImagePullSecrets)-1].Name != "mirror-pull" {
			t.Errorf("Pod %s lacks the pull secret: %+v", p.Name, p.Spec.ImagePullSecrets)
		}
	}
}

// `chartkeeper images` lists exactly the images `helm template` renders
// for each chart with its defaults and each sample (an independent
// renderer), and --relocated maps each to the mirror.
func TestImagesMatchRenderedManifests(t *testing.T) {
	parallel(t, quick) // no cluster: create-api, helm template and images read files
	proj := t.TempDir()
	for _, k := range foreignKinds(t) {
		chartkeeper(t, 0, "create-api", "--chart", k.chart, "--group", foreignGroup, "--version", "v1alpha1", "--kind", k.kind, "--project-dir", proj)
	}
	// A second Memcached sample turns the exporter sidecar on.
	extra := "apiVersion: foreign.chartkeeper.dev/v1alpha1\nkind: Memcached\nmetadata:\n  name: with-metrics\nspec:\n  metrics:\n    enabled: true\n"
	if err := os.WriteFile(filepath.Join(proj, "config", "samples", "memcached_metrics.yaml"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	image := regexp.MustCompile(`(?m)^\s*(?:- )?image:\s*"?([^"\s]+)"?\s*$`)
	helm := filepath.Join(testenv.BinDir(), "helm")
	for _, f := range sampleFiles(t, filepath.Join(proj, "config", "samples")) {
		u := readSampleCRs(t, f)[0]
		chart := map[string]string{"Demo": "helm-create-demo", "Memcached": "memcached", "Person": "empty", "Family": "chart-without-schema"}[u.GetKind()]
		spec, _ := yaml.Marshal(u.Object["spec"])
		vals := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(vals, spec, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"template", "x", filepath.Join(proj, "charts", chart)}, {"template", "x", filepath.Join(proj, "charts", chart), "-f", vals}} {
			out, err := exec.Command(helm, append(args, "--skip-tests")...).CombinedOutput()
			if err != nil && !strings.Contains(string(out), "missing property") { // the defaults of Family need values
				t.Fatalf("helm %v: %v\n%s", args, err, out)
			}
			for _, m := range image.FindAllStringSubmatch(string(out), -1) {
				want[m[1]] = true
			}
		}
	}
	got := strings.Fields(chartkeeper(t, 0, "images", "--watches-file", filepath.Join(proj, "watches.yaml"), "--config-dir", filepath.Join(proj, "config")))
	wantList := make([]string, 0, len(want))
	for img := range want {
		wantList = append(wantList, img)
	}
	sort.Strings(wantList)
	if strings.Join(got, "\n") != strings.Join(wantList, "\n") {
		t.Errorf("chartkeeper images:\n%s\nhelm template:\n%s", strings.Join(got, "\n"), strings.Join(wantList, "\n"))
	}
	pairs := chartkeeper(t, 0, "images", "--relocated", "--image-registry", "mirror.local", "--watches-file", filepath.Join(proj, "watches.yaml"), "--config-dir", filepath.Join(proj, "config"))
	if !strings.Contains(pairs, "docker.io/prom/memcached-exporter:v0.14.4 mirror.local/prom/memcached-exporter:v0.14.4") ||
		!strings.Contains(pairs, "nginx:1.16.0 mirror.local/library/nginx:1.16.0") {
		t.Errorf("--relocated:\n%s", pairs)
	}
}

// chartkeeper runs the binary and fails unless it exits with code; it
// returns stdout.
func chartkeeper(t *testing.T, code int, args ...string) string {
	t.Helper()
	cmd := exec.Command(operatorBinary(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if got := cmd.ProcessState.ExitCode(); got != code {
		t.Fatalf("chartkeeper %s: exit %d (want %d): %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), got, code, err, stdout.String(), stderr.String())
	}
	return stdout.String() + stderr.String()
}

// treeDigest hashes every file under dir with its path.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// applyCRDs creates the CRDs in dir, waits until they are established and
// deletes them at the end; it returns their kinds.
func applyCRDs(t *testing.T, env *testenv.Env, dir string) []schema.GroupVersionKind {
	t.Helper()
	ctx := context.Background()
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	var out []schema.GroupVersionKind
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crd := &apiextv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(b, crd); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, crd); err != nil {
			t.Fatalf("the API server refused %s: %v", filepath.Base(f), err)
		}
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), crd) })
		for _, v := range crd.Spec.Versions {
			if v.Storage {
				out = append(out, schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind})
			}
		}
		waitEstablished(t, env, crd.Name)
	}
	for _, gvk := range out {
		waitMapped(t, env, gvk)
	}
	return out
}

// waitMapped waits until the test client can map gvk: discovery can still
// lack a kind whose CRD was just Established, and then the client's mapper
// answers "no matches for kind" (a group another test made known earlier).
func waitMapped(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func(context.Context) error {
		_, err := env.Client.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
		return err
	})
}

func waitEstablished(t *testing.T, env *testenv.Env, name string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		got := &apiextv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: name}, got); err != nil {
			return err
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
				return nil
			}
		}
		return fmt.Errorf("CRD %s not established", name)
	})
}

// deleteAll deletes the custom resources of kinds in ns and waits until
// the operator has let them go.
func deleteAll(t *testing.T, env *testenv.Env, ns string, kinds []schema.GroupVersionKind) {
	t.Helper()
	for _, gvk := range kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		if err := env.Client.DeleteAllOf(context.Background(), u, client.InNamespace(ns)); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", gvk.Kind, err)
			return
		}
	}
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		for _, gvk := range kinds {
			var list unstructured.UnstructuredList
			list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
			if err := env.Client.List(ctx, &list, client.InNamespace(ns)); err != nil {
				return err
			}
			if len(list.Items) > 0 {
				return fmt.Errorf("%d %s left", len(list.Items), gvk.Kind)
			}
		}
		return nil
	})
}

func sampleFiles(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if filepath.Base(f) != "kustomization.yaml" {
			out = append(out, f)
		}
	}
	return out
}

// readSampleCRs reads the custom resources of a sample file or directory.
func readSampleCRs(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		files = sampleFiles(t, path)
	}
	var out []*unstructured.Unstructured
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, u)
	}
	return out
}

// waitCRReady waits until a custom resource of any kind is Ready for its
// current generation.
func waitCRReady(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("%s %s: %+v", gvk.Kind, name, st.Conditions)
		}
		return nil
	})
}
