package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/certs"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Templated CRDs are chart content, not the tenant's: a custom resource
// chooses values, and a CRD is cluster-wide.

// unseenCRD is a CRD the chart renders only from a resource's values
// (extraCRD), which create-api never sees.
const unseenCRD = "widgets.tenant.corpus.chartkeeper.dev"

// tenantTemplates gives the certissuer copy a templated CRD named by the
// values (extraCRD) and makes the templated Certificate CRD carry a label
// from the values (crds.note): what a tenant's values could change.
func tenantTemplates(t *testing.T) func(dir string) {
	return func(dir string) {
		t.Helper()
		extra := `{{- if .Values.extraCRD.group }}
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {{ .Values.extraCRD.plural }}.{{ .Values.extraCRD.group }}
spec:
  group: {{ .Values.extraCRD.group }}
  names: {kind: Widget, listKind: WidgetList, plural: {{ .Values.extraCRD.plural }}, singular: widget}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
{{- end }}
`
		if err := os.WriteFile(filepath.Join(dir, "templates", "crd-extra.yaml"), []byte(extra), 0o644); err != nil {
			t.Fatal(err)
		}
		crd := filepath.Join(dir, "templates", "crd-certificates.yaml")
		b := strings.Replace(string(readFile(t, crd)), "    app.kubernetes.io/name: certissuer\n",
			"    app.kubernetes.io/name: certissuer\n    certissuer.example/note: {{ .Values.crds.note | default \"none\" | quote }}\n", 1)
		if err := os.WriteFile(crd, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
		vals := filepath.Join(dir, "values.yaml")
		v := strings.Replace(string(readFile(t, vals)), "crds:\n", "crds:\n  note: \"\"\n", 1) +
			"\nextraCRD:\n  group: \"\"\n  plural: \"\"\n"
		if err := os.WriteFile(vals, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// waitCRDRefused waits until the CertIssuer is Stalled with reason, its
// message naming crd.
func (f *crdPolicyFixture) waitCRDRefused(name string, reason api.Reason, crd string) metav1.Condition {
	f.t.Helper()
	var c metav1.Condition
	testenv.Eventually(f.t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, f.env, certIssuerGVK, f.ns, name)
		if err != nil {
			return err
		}
		c = condition(st, api.ConditionStalled)
		if c.Status != metav1.ConditionTrue || c.Reason != string(reason) || !strings.Contains(c.Message, crd) {
			return fmt.Errorf("not stalled with %s naming %s: %+v", reason, crd, st.Conditions)
		}
		return nil
	})
	return c
}

// A resource in a tenant namespace can neither create a CRD create-api
// did not see (one its values name) nor change the chart's templated CRD
// (a label from its values), even under create-and-replace; a resource
// with the chart's values releases, CRD included.
func TestTemplatedCRDTenantValuesRefused(t *testing.T) {
	f := newCRDFixture(t, "create-and-replace", "  scope: {clusterScoped: true}\n", tenantTemplates(t))
	t.Cleanup(func() { deleteCRDs(t, f.env, unseenCRD) })
	ctx := context.Background()
	f.create("certs", map[string]any{})
	f.waitRevision("certs", 1)
	crd, err := getCRD(ctx, f.env, certificateCRD)
	if err != nil {
		t.Fatal(err)
	}
	if crd.Labels["certissuer.example/note"] != "none" {
		t.Fatalf("the chart-default CRD %s was not applied: labels %v", certificateCRD, crd.Labels)
	}

	f.create("changer", map[string]any{"crds": map[string]any{"note": "tenant"}})
	f.waitCRDRefused("changer", api.ReasonCRDTemplateRefused, certificateCRD)
	if crd, err := getCRD(ctx, f.env, certificateCRD); err != nil {
		t.Fatal(err)
	} else if crd.Labels["certissuer.example/note"] != "none" {
		t.Errorf("a resource's values changed CRD %s: labels %v", certificateCRD, crd.Labels)
	}
	f.create("unseen", map[string]any{"extraCRD": map[string]any{"group": "tenant.corpus.chartkeeper.dev", "plural": "widgets"}})
	msg := f.waitCRDRefused("unseen", api.ReasonCRDTemplateRefused, unseenCRD).Message
	t.Logf("refusal: %s", msg)
	if _, err := getCRD(ctx, f.env, unseenCRD); !apierrors.IsNotFound(err) {
		t.Errorf("a resource's values created CRD %s (%v)", unseenCRD, err)
	}

}

// A templated CRD is cluster-scoped: a watch whose scope allows no
// cluster-scoped objects refuses it, and it is not created.
func TestTemplatedCRDOutsideScope(t *testing.T) {
	f := newCRDFixture(t, "create", "", nil)
	f.create("certs", map[string]any{})
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, f.env, certIssuerGVK, f.ns, "certs")
		if err != nil {
			return err
		}
		c := condition(st, api.ConditionStalled)
		if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, certificateCRD) || !strings.Contains(c.Message, "scope.clusterScoped") {
			return fmt.Errorf("not stalled naming %s and scope.clusterScoped: %+v", certificateCRD, st.Conditions)
		}
		return nil
	})
	if _, err := getCRD(context.Background(), f.env, certificateCRD); !apierrors.IsNotFound(err) {
		t.Errorf("CRD %s outside the watch's scope was created (%v)", certificateCRD, err)
	}
}

// A manually approved upgrade of a chart with a templated CRD plans (the
// CRD, unchanged, is not in the plan) and, approved, applies.
func TestTemplatedCRDPlanApprove(t *testing.T) {
	f := newCRDFixture(t, "create", "  scope: {clusterScoped: true}\n  upgrade: {approval: manual}\n", nil)
	f.create("certs", map[string]any{})
	f.waitRevision("certs", 1)
	patchCR(t, f.env, certIssuerGVK, f.ns, "certs", map[string]any{"replicaCount": 2})
	var plan *api.PlanStatus
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, f.env, certIssuerGVK, f.ns, "certs")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionPlanReady); c.Status != metav1.ConditionTrue || st.Plan == nil {
			return fmt.Errorf("PlanReady %+v", c)
		}
		plan = st.Plan
		return nil
	})
	for _, o := range append(append(plan.Create, plan.Update...), plan.Delete...) {
		if o.Kind == "CustomResourceDefinition" {
			t.Errorf("the plan lists the unchanged CRD %s", o.Name)
		}
	}
	annotate(t, f.env, certIssuerGVK, f.ns, "certs", map[string]any{api.AnnotationApprove: plan.Digest})
	f.waitRevision("certs", 2)
}

// webhookConversion gives the Issuer CRD of the chart's copy a conversion
// webhook (its CA bundle injected by another controller, as cert-manager's
// cainjector does).
func webhookConversion(crd *apiextv1.CustomResourceDefinition) {
	path := "/convert"
	crd.Spec.Conversion = &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
		ClientConfig:             &apiextv1.WebhookClientConfig{Service: &apiextv1.ServiceReference{Namespace: "default", Name: "certissuer-webhook", Path: &path}},
		ConversionReviewVersions: []string{"v1"},
	}}
}

// create-and-replace applies the chart's fields of a CRD only: a CA bundle
// and a label another actor set survive a chart upgrade that changes it.
func TestCRDReplaceKeepsOthersFields(t *testing.T) {
	f := newCRDFixture(t, "create-and-replace", "  scope: {clusterScoped: true}\n", func(dir string) {
		path := filepath.Join(dir, "crds", "issuers.yaml")
		crd := &apiextv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(readFile(t, path), crd); err != nil {
			t.Fatal(err)
		}
		webhookConversion(crd)
		if err := os.WriteFile(path, mustYAML(t, crd), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	ctx := context.Background()
	f.create("certs", map[string]any{})
	f.waitRevision("certs", 1)

	ca, err := certs.NewCA(certs.Spec{CommonName: "certissuer-webhook-ca", NotBefore: time.Now().Add(-time.Hour), Lifetime: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	caBundle := base64.StdEncoding.EncodeToString(certs.CertPEM(ca.Cert))
	patch := fmt.Sprintf(`{"metadata":{"labels":{"team.example/owner":"platform"}},"spec":{"conversion":{"webhook":{"clientConfig":{"caBundle":%q}}}}}`, caBundle)
	crd := &apiextv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: issuerCRD}}
	if err := f.env.Client.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner("cainjector")); err != nil {
		t.Fatal(err)
	}

	f.upgradeChart("1.5.0", acmeAdded)
	f.waitRevision("certs", 2)
	crd, err = getCRD(ctx, f.env, issuerCRD)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := issuerSpecProps(t, crd)["acme"]; !ok {
		t.Errorf("the chart's change of CRD %s was not applied", issuerCRD)
	}
	if crd.Labels["team.example/owner"] != "platform" {
		t.Errorf("the upgrade dropped another actor's label: %v", crd.Labels)
	}
	if c := crd.Spec.Conversion; c == nil || c.Webhook == nil || c.Webhook.ClientConfig == nil || base64.StdEncoding.EncodeToString(c.Webhook.ClientConfig.CABundle) != caBundle {
		t.Errorf("the upgrade dropped the injected caBundle: %+v", c)
	}
}
