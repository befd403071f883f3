package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The corpus chart certissuer ships two CRDs: Issuer in crds/, Certificate
// in templates (behind crds.enabled).
var certIssuerGVK = schema.GroupVersionKind{Group: "corpus.chartkeeper.dev", Version: "v1alpha1", Kind: "CertIssuer"}

const (
	issuerCRD      = "issuers.certs.corpus.chartkeeper.dev"
	certificateCRD = "certificates.certs.corpus.chartkeeper.dev"
	// certIssuerCRD is the CertIssuer kind's own CRD, which the corpus walk
	// creates anew: these tests leave it behind no more than the chart's.
	certIssuerCRD = "certissuers.corpus.chartkeeper.dev"
)

// crdPolicyFixture runs the operator, as the generated ServiceAccount,
// over a copy of the certissuer chart with a watch of the given CRD policy
// ("" leaves the field out: the default), whose scope allows cluster-scoped
// objects (the templated Certificate CRD is admitted against it).
type crdPolicyFixture struct {
	t                              *testing.T
	env                            *testenv.Env
	ns, chart, watches, kubeconfig string
	op                             *process
}

func newCRDPolicyFixture(t *testing.T, policy string) *crdPolicyFixture {
	t.Helper()
	return newCRDFixture(t, policy, "  scope: {clusterScoped: true}\n", nil)
}

// newCRDFixture is newCRDPolicyFixture with more of the watch entry
// (extra: indented lines) and an edit of the chart's copy (its directory)
// before the RBAC is generated.
func newCRDFixture(t *testing.T, policy, extra string, edit func(dir string)) *crdPolicyFixture {
	t.Helper()
	env := testenv.Cluster(t)
	deleteChartCRDs(t, env) // CRDs are cluster-wide: start from none, leave none
	t.Cleanup(func() { deleteChartCRDs(t, env) })
	dir := t.TempDir()
	chart := filepath.Join(dir, "certissuer")
	if err := os.CopyFS(chart, os.DirFS(filepath.Join(testenv.RepoRoot(), "test", "corpus", "certissuer"))); err != nil {
		t.Fatal(err)
	}
	w := fmt.Sprintf("- group: %s\n  version: %s\n  kind: %s\n  chart: certissuer\n  remediation:\n    backoff: {initial: 1s, max: 2s}\n",
		certIssuerGVK.Group, certIssuerGVK.Version, certIssuerGVK.Kind)
	if policy != "" {
		w += "  crds: {policy: " + policy + "}\n"
	}
	w += extra
	if edit != nil {
		edit(chart)
	}
	f := &crdPolicyFixture{t: t, env: env, chart: chart, watches: filepath.Join(dir, "watches.yaml")}
	if err := os.WriteFile(f.watches, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	installCRDs(t, env, f.watches)
	f.ns = env.Namespace(t)
	f.kubeconfig = operatorKubeconfig(t, env, f.watches)
	f.start()
	return f
}

// start runs the operator; the CertIssuers are deleted while it still runs.
func (f *crdPolicyFixture) start() {
	f.t.Helper()
	f.op = startOperatorEnv(f.t, []string{"WATCH_NAMESPACE=" + f.ns}, f.kubeconfig, f.watches, "--metrics-bind-address", "0")
	f.t.Cleanup(func() { deleteAll(f.t, f.env, f.ns, []schema.GroupVersionKind{certIssuerGVK}) })
}

// upgradeChart edits the chart's crds/ Issuer CRD, gives the chart a new
// version and restarts the operator on it: a chart upgrade.
func (f *crdPolicyFixture) upgradeChart(version string, edit func(crd *apiextv1.CustomResourceDefinition)) {
	f.t.Helper()
	path := filepath.Join(f.chart, "crds", "issuers.yaml")
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(readFile(f.t, path), crd); err != nil {
		f.t.Fatal(err)
	}
	edit(crd)
	if err := os.WriteFile(path, mustYAML(f.t, crd), 0o644); err != nil {
		f.t.Fatal(err)
	}
	meta := filepath.Join(f.chart, "Chart.yaml")
	b := strings.Replace(string(readFile(f.t, meta)), "\nversion: 1.4.0", "\nversion: "+version, 1)
	if err := os.WriteFile(meta, []byte(b), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if err := f.op.interrupt(f.t, 30*time.Second); err != nil {
		f.t.Logf("operator exit: %v", err)
	}
	f.start()
}

func (f *crdPolicyFixture) create(name string, spec map[string]any) {
	f.t.Helper()
	if err := f.env.Client.Create(context.Background(), newCR(certIssuerGVK, f.ns, name, spec)); err != nil {
		f.t.Fatal(err)
	}
}

// waitRevision waits until the CertIssuer is Ready at revision rev.
func (f *crdPolicyFixture) waitRevision(name string, rev int) {
	f.t.Helper()
	testenv.Eventually(f.t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, f.env, certIssuerGVK, f.ns, name)
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("not ready: %+v", st.Conditions)
		}
		if st.Release == nil || st.Release.Revision != rev {
			return fmt.Errorf("ready at %+v, want revision %d", st.Release, rev)
		}
		return nil
	})
}

func getCRD(ctx context.Context, env *testenv.Env, name string) (*apiextv1.CustomResourceDefinition, error) {
	crd := &apiextv1.CustomResourceDefinition{}
	return crd, env.Client.Get(ctx, client.ObjectKey{Name: name}, crd)
}

func deleteChartCRDs(t *testing.T, env *testenv.Env) {
	t.Helper()
	deleteCRDs(t, env, issuerCRD, certificateCRD, certIssuerCRD)
}

// deleteCRDs deletes the named CRDs and waits until they are gone.
func deleteCRDs(t *testing.T, env *testenv.Env, names ...string) {
	t.Helper()
	for _, name := range names {
		crd := &apiextv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := env.Client.Delete(context.Background(), crd); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting CRD %s: %v", name, err)
		}
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		for _, name := range names {
			if _, err := getCRD(ctx, env, name); !apierrors.IsNotFound(err) {
				return fmt.Errorf("CRD %s is still there (%v)", name, err)
			}
		}
		return nil
	})
}

func issuerSpecProps(t *testing.T, crd *apiextv1.CustomResourceDefinition) map[string]apiextv1.JSONSchemaProps {
	t.Helper()
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1" {
			return v.Schema.OpenAPIV3Schema.Properties["spec"].Properties
		}
	}
	t.Fatalf("CRD %s has no version v1", crd.Name)
	return nil
}

// acmeAdded is a compatible change of the Issuer CRD: a new optional field.
func acmeAdded(crd *apiextv1.CustomResourceDefinition) {
	spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
	spec.Properties["acme"] = apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"server": {Type: "string"}}}
	crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
}

// Default policy (create): both CRDs (crds/ and templated) are created by
// the operator, labelled with the chart, and are no part of the Helm
// release; a chart upgrade does not replace an existing CRD; deleting the
// custom resource leaves both CRDs.
func TestCRDPolicyCreate(t *testing.T) {
	f := newCRDPolicyFixture(t, "")
	ctx := context.Background()
	f.create("certs", map[string]any{"crds": map[string]any{"keep": false}})
	f.waitRevision("certs", 1)
	for _, name := range []string{issuerCRD, certificateCRD} {
		crd, err := getCRD(ctx, f.env, name)
		if err != nil {
			t.Fatalf("CRD %s was not created: %v", name, err)
		}
		if crd.Labels[api.LabelCRDChart] != "certissuer" || crd.Annotations[api.AnnotationCRDChartVersion] != "1.4.0" {
			t.Errorf("CRD %s does not name the chart that applied it: labels %v annotations %v", name, crd.Labels, crd.Annotations)
		}
	}
	if m := helmCmd(t, f.env, "get", "manifest", "certs", "-n", f.ns); strings.Contains(m, "CustomResourceDefinition") {
		t.Errorf("the Helm release holds a CRD:\n%s", m)
	}

	// A chart upgrade with a changed CRD: create leaves the existing one.
	f.upgradeChart("1.5.0", acmeAdded)
	f.waitRevision("certs", 2)
	crd, err := getCRD(ctx, f.env, issuerCRD)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := issuerSpecProps(t, crd)["acme"]; ok {
		t.Errorf("policy create replaced the existing CRD %s", issuerCRD)
	}

	deleteAll(t, f.env, f.ns, []schema.GroupVersionKind{certIssuerGVK})
	for _, name := range []string{issuerCRD, certificateCRD} {
		if _, err := getCRD(ctx, f.env, name); err != nil {
			t.Errorf("CRD %s did not survive the custom resource: %v", name, err)
		}
	}
}

// Policy skip: chartkeeper creates no CRD. A release that needs none
// installs; one that creates an instance of the chart's own crds/ CRD (the
// default Issuer) says which kind is missing, as the CRDs are to be
// installed another way.
func TestCRDPolicySkip(t *testing.T) {
	f := newCRDPolicyFixture(t, "skip")
	f.create("certs", map[string]any{"selfSignedIssuer": map[string]any{"create": false}})
	f.create("with-issuer", map[string]any{})
	f.waitRevision("certs", 1)
	for _, name := range []string{issuerCRD, certificateCRD} {
		if _, err := getCRD(context.Background(), f.env, name); !apierrors.IsNotFound(err) {
			t.Errorf("policy skip: CRD %s exists (%v)", name, err)
		}
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, f.env, certIssuerGVK, f.ns, "with-issuer")
		if err != nil {
			return err
		}
		c := condition(st, api.ConditionReady)
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonMissingDependency) || !strings.Contains(c.Message, `kind "Issuer"`) {
			return fmt.Errorf("Ready is %s %s %q, want False %s naming the kind Issuer", c.Status, c.Reason, c.Message, api.ReasonMissingDependency)
		}
		return nil
	})
}

// Policy create-and-replace: a chart upgrade with a compatible CRD (a new
// optional field) replaces it; one with a breaking CRD (a field's type
// changed) is refused before Helm does anything, with a condition naming
// the CRD, the version and the field, and the release stays at its
// revision.
func TestCRDPolicyCreateAndReplace(t *testing.T) {
	f := newCRDPolicyFixture(t, "create-and-replace")
	ctx := context.Background()
	f.create("certs", map[string]any{})
	f.waitRevision("certs", 1)

	f.upgradeChart("1.5.0", acmeAdded)
	f.waitRevision("certs", 2)
	crd, err := getCRD(ctx, f.env, issuerCRD)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := issuerSpecProps(t, crd)["acme"]; !ok {
		t.Errorf("the compatible CRD %s was not replaced", issuerCRD)
	}
	if crd.Annotations[api.AnnotationCRDChartVersion] != "1.5.0" {
		t.Errorf("CRD %s does not name chart version 1.5.0: %v", issuerCRD, crd.Annotations)
	}

	f.upgradeChart("2.0.0", func(crd *apiextv1.CustomResourceDefinition) {
		acmeAdded(crd)
		spec := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
		spec.Properties["selfSigned"].Properties["crlDistributionPoints"] = apiextv1.JSONSchemaProps{Type: "string"}
		crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"] = spec
	})
	var st api.Status
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		var err error
		if _, st, err = getCR(ctx, f.env, certIssuerGVK, f.ns, "certs"); err != nil {
			return err
		}
		if c := condition(st, api.ConditionStalled); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonCRDUpgradeRefused) {
			return fmt.Errorf("not stalled with %s: %+v", api.ReasonCRDUpgradeRefused, st.Conditions)
		}
		return nil
	})
	msg := condition(st, api.ConditionStalled).Message
	for _, want := range []string{issuerCRD, "v1", "spec.selfSigned.crlDistributionPoints"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not name %q: %s", want, msg)
		}
	}
	if st.Release == nil || st.Release.Revision != 2 {
		t.Errorf("the refused upgrade changed the release: %+v", st.Release)
	}
	crd, err = getCRD(ctx, f.env, issuerCRD)
	if err != nil {
		t.Fatal(err)
	}
	if p := issuerSpecProps(t, crd)["selfSigned"].Properties["crlDistributionPoints"]; p.Type != "array" {
		t.Errorf("the breaking CRD was applied: crlDistributionPoints is %q", p.Type)
	}
}
