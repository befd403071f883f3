package crdschema

import (
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The conversion of a CRD serving more than one version, and new
// x-kubernetes-validations rules, are part of the safe-upgrade check.
func TestBreakingCRDConversionAndRules(t *testing.T) {
	schema := func(rules ...string) *apiextv1.CustomResourceValidation {
		spec := apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"size": {Type: "integer"}}}
		for _, r := range rules {
			spec.XValidations = append(spec.XValidations, apiextv1.ValidationRule{Rule: r})
		}
		return &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"spec": spec}}}
	}
	path := "/convert"
	webhook := func(name string, ca []byte) *apiextv1.CustomResourceConversion {
		return &apiextv1.CustomResourceConversion{Strategy: apiextv1.WebhookConverter, Webhook: &apiextv1.WebhookConversion{
			ClientConfig: &apiextv1.WebhookClientConfig{Service: &apiextv1.ServiceReference{Namespace: "system", Name: name, Path: &path}, CABundle: ca}}}
	}
	crd := func(conv *apiextv1.CustomResourceConversion, versions []string, rules ...string) *apiextv1.CustomResourceDefinition {
		c := &apiextv1.CustomResourceDefinition{}
		c.Spec.Scope, c.Spec.Conversion, c.Status.StoredVersions = apiextv1.NamespaceScoped, conv, versions[:1]
		for _, v := range versions {
			c.Spec.Versions = append(c.Spec.Versions, apiextv1.CustomResourceDefinitionVersion{Name: v, Served: true, Schema: schema(rules...)})
		}
		return c
	}
	two, one := []string{"v1", "v2"}, []string{"v1"}
	ca := []byte("-----BEGIN CERTIFICATE-----")
	for _, tc := range []struct {
		name     string
		old, new *apiextv1.CustomResourceDefinition
		want     []string
	}{
		{"same webhook, caBundle kept", crd(webhook("conv", ca), two), crd(webhook("conv", ca), two), nil},
		{"webhook dropped", crd(webhook("conv", ca), two), crd(nil, two), []string{"conversion.strategy: changed from Webhook to None"}},
		{"webhook moved", crd(webhook("conv", ca), two), crd(webhook("other", ca), two),
			[]string{"conversion.webhook.clientConfig: moved from service system/conv/convert to service system/other/convert"}},
		{"caBundle lost", crd(webhook("conv", ca), two), crd(webhook("conv", nil), two), []string{"conversion.webhook.clientConfig.caBundle: removed"}},
		{"one version: nothing is converted", crd(webhook("conv", ca), one), crd(nil, one), nil},
		{"new validation rule", crd(nil, one), crd(nil, one, "self.size <= 10"), []string{`version v1: spec: new validation rule "self.size <= 10"`}},
		{"rule kept", crd(nil, one, "self.size <= 10"), crd(nil, one, "self.size <= 10"), nil},
		{"rule removed", crd(nil, one, "self.size <= 10"), crd(nil, one), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range BreakingCRD(tc.old, tc.new) {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
