package crdschema

import (
	"fmt"
	"sort"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// conversionChanges lists what a change of the CRD's conversion breaks:
// where custom resources may be read in another version than they are
// stored in (new serves, or old has stored, more than one version), a
// changed strategy, a webhook moved to another endpoint, or one that
// lost its caBundle, leaves them unreadable.
func conversionChanges(old, new *apiextv1.CustomResourceDefinition) []CRDChange {
	versions := map[string]bool{}
	for _, v := range new.Spec.Versions {
		if v.Served {
			versions[v.Name] = true
		}
	}
	for _, v := range old.Status.StoredVersions {
		versions[v] = true
	}
	if len(versions) < 2 {
		return nil // nothing is ever converted
	}
	os, ns := strategy(old), strategy(new)
	if os != ns {
		return []CRDChange{{Change: Change{Path: "conversion.strategy", Detail: fmt.Sprintf("changed from %s to %s", os, ns)}}}
	}
	if ns != apiextv1.WebhookConverter {
		return nil
	}
	oc, nc := webhookConfig(old), webhookConfig(new)
	var out []CRDChange
	if a, b := endpoint(oc), endpoint(nc); a != b {
		out = append(out, CRDChange{Change: Change{Path: "conversion.webhook.clientConfig", Detail: fmt.Sprintf("moved from %s to %s", a, b)}})
	}
	if len(oc.CABundle) > 0 && len(nc.CABundle) == 0 {
		out = append(out, CRDChange{Change: Change{Path: "conversion.webhook.clientConfig.caBundle", Detail: "removed"}})
	}
	return out
}

func strategy(c *apiextv1.CustomResourceDefinition) apiextv1.ConversionStrategyType {
	if c.Spec.Conversion == nil || c.Spec.Conversion.Strategy == "" {
		return apiextv1.NoneConverter
	}
	return c.Spec.Conversion.Strategy
}

func webhookConfig(c *apiextv1.CustomResourceDefinition) apiextv1.WebhookClientConfig {
	if c.Spec.Conversion == nil || c.Spec.Conversion.Webhook == nil || c.Spec.Conversion.Webhook.ClientConfig == nil {
		return apiextv1.WebhookClientConfig{}
	}
	return *c.Spec.Conversion.Webhook.ClientConfig
}

// endpoint names where a webhook is called.
func endpoint(c apiextv1.WebhookClientConfig) string {
	switch {
	case c.URL != nil:
		return *c.URL
	case c.Service != nil:
		s := fmt.Sprintf("service %s/%s", c.Service.Namespace, c.Service.Name)
		if c.Service.Port != nil && *c.Service.Port != 443 {
			s += fmt.Sprintf(":%d", *c.Service.Port)
		}
		if c.Service.Path != nil {
			s += *c.Service.Path
		}
		return s
	}
	return "none"
}

// newRules lists the x-kubernetes-validations rules new adds anywhere in
// a version's schema (paths as in a custom resource): a custom resource
// the cluster holds may fail one, and then can no longer be updated.
func newRules(path string, o, n *apiextv1.JSONSchemaProps, out *[]Change) {
	if o == nil || n == nil {
		return
	}
	had := map[string]bool{}
	for _, r := range o.XValidations {
		had[r.Rule] = true
	}
	for _, r := range n.XValidations {
		if !had[r.Rule] {
			p := strings.TrimPrefix(path, ".")
			if p == "" {
				p = "(root)"
			}
			*out = append(*out, Change{Path: p, Detail: fmt.Sprintf("new validation rule %q", r.Rule)})
		}
	}
	names := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		op, ok := o.Properties[k]
		if !ok {
			continue
		}
		np := n.Properties[k]
		newRules(path+"."+k, &op, &np, out)
	}
	if o.Items != nil && n.Items != nil {
		newRules(path+"[]", o.Items.Schema, n.Items.Schema, out)
	}
	if o.AdditionalProperties != nil && n.AdditionalProperties != nil {
		newRules(path+".*", o.AdditionalProperties.Schema, n.AdditionalProperties.Schema, out)
	}
}
