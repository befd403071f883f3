package manifests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// bundleDir is the generated OLM bundle (kept current by make lint).
const bundleDir = "../../config/bundle"

func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// The bundle follows the registry+v1 format: annotations.yaml names the
// media type, the manifests/ and metadata/ directories, the package and
// channels; bundle.Dockerfile carries the same labels and copies both
// directories; manifests/ holds the CSV and every CRD, which the CSV owns
// with a description, and its install strategy is the manager Deployment
// with the RBAC of config/rbac.
func TestBundleStructure(t *testing.T) {
	ann, _ := readYAML(t, filepath.Join(bundleDir, "metadata", "annotations.yaml"))["annotations"].(map[string]any)
	want := map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   "chartkeeper",
	}
	for k, v := range want {
		if ann[k] != v {
			t.Errorf("annotations.yaml %s = %v, want %s", k, ann[k], v)
		}
	}
	for _, k := range []string{"operators.operatorframework.io.bundle.channels.v1", "operators.operatorframework.io.bundle.channel.default.v1"} {
		if s, _ := ann[k].(string); s == "" {
			t.Errorf("annotations.yaml lacks %s", k)
		}
	}
	df, err := os.ReadFile(filepath.Join(bundleDir, "bundle.Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range ann {
		if line := "LABEL " + k + "=" + v.(string); !strings.Contains(string(df), line+"\n") {
			t.Errorf("bundle.Dockerfile lacks %q", line)
		}
	}
	for _, line := range []string{"FROM scratch", "COPY manifests /manifests/", "COPY metadata /metadata/"} {
		if !strings.Contains(string(df), line+"\n") {
			t.Errorf("bundle.Dockerfile lacks %q", line)
		}
	}

	crds := map[string]map[string]any{}
	bases, _ := filepath.Glob("../../config/crd/bases/*.yaml")
	if len(bases) == 0 {
		t.Fatal("no CRDs under config/crd/bases")
	}
	for _, b := range bases {
		m := readYAML(t, filepath.Join(bundleDir, "manifests", filepath.Base(b)))
		if m["kind"] != "CustomResourceDefinition" {
			t.Errorf("manifests/%s is not a CRD", filepath.Base(b))
		}
		crds[dig(m, "metadata", "name").(string)] = m
	}
	csv := readYAML(t, filepath.Join(bundleDir, "manifests", "chartkeeper.clusterserviceversion.yaml"))
	if csv["apiVersion"] != "operators.coreos.com/v1alpha1" || csv["kind"] != "ClusterServiceVersion" {
		t.Fatalf("CSV is %v %v", csv["apiVersion"], csv["kind"])
	}
	if v, _ := dig(csv, "spec", "version").(string); v == "" || !strings.HasSuffix(dig(csv, "metadata", "name").(string), ".v"+v) {
		t.Errorf("CSV name %v, version %v", dig(csv, "metadata", "name"), v)
	}
	owned, _ := dig(csv, "spec", "customresourcedefinitions", "owned").([]any)
	seen := map[string]bool{}
	for _, o := range owned {
		name, _ := dig(o, "name").(string)
		crd := crds[name]
		if crd == nil {
			t.Errorf("CSV owns %s, not in manifests/", name)
			continue
		}
		seen[name] = true
		if dig(o, "kind") != dig(crd, "spec", "names", "kind") || dig(o, "version") == nil || dig(o, "description") == "" || dig(o, "description") == nil {
			t.Errorf("owned CRD %v: kind, version or description missing", o)
		}
	}
	for name := range crds {
		if !seen[name] {
			t.Errorf("CSV does not own %s", name)
		}
	}
	if dig(csv, "spec", "install", "strategy") != "deployment" {
		t.Errorf("install strategy %v", dig(csv, "spec", "install", "strategy"))
	}
	spec := dig(csv, "spec", "install", "spec")
	if dig(spec, "deployments", 0, "name") != "chartkeeper-controller-manager" ||
		dig(spec, "deployments", 0, "spec", "template", "spec", "containers", 0, "securityContext", "readOnlyRootFilesystem") != true {
		t.Errorf("install deployments %v", dig(spec, "deployments"))
	}
	sa := dig(spec, "deployments", 0, "spec", "template", "spec", "serviceAccountName")
	role := readYAML(t, "../../config/rbac/role.yaml")
	metricsAuth := readYAML(t, "../../config/rbac/metrics_auth_role.yaml") // --metrics-secure checks scrapers' tokens
	if dig(spec, "clusterPermissions", 0, "serviceAccountName") != sa ||
		len(dig(spec, "clusterPermissions", 0, "rules").([]any)) != len(role["rules"].([]any))+len(metricsAuth["rules"].([]any)) {
		t.Errorf("clusterPermissions %v (sa %v)", dig(spec, "clusterPermissions"), sa)
	}
	if dig(spec, "permissions", 0, "serviceAccountName") != sa || dig(spec, "permissions", 0, "rules", 0, "resources", 0) != "leases" {
		t.Errorf("permissions %v", dig(spec, "permissions"))
	}
	modes := map[any]bool{}
	for _, m := range dig(csv, "spec", "installModes").([]any) {
		modes[dig(m, "type")] = dig(m, "supported").(bool)
	}
	if !modes["AllNamespaces"] || len(modes) != 4 {
		t.Errorf("installModes %v", modes)
	}
}
