package manifests

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// renderRelease and renderNamespace are the release name and namespace
// charts are rendered with.
const (
	renderRelease   = "render"
	renderNamespace = "default"
)

// clusterScopedKinds are the built-in kinds that live outside namespaces.
// Kinds of custom resources are cluster-scoped when a CRD the chart ships
// (crds/ or templates) says so; other kinds are taken as namespaced.
var clusterScopedKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}: true, {Kind: "Node"}: true, {Kind: "PersistentVolume"}: true,
	{Kind: "ComponentStatus"}:                                                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:                         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:                  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}:                 true,
	{Group: "apiregistration.k8s.io", Kind: "APIService"}:                             true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}:   true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:     true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}:        true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicyBinding"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicy"}:          true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingAdmissionPolicyBinding"}:   true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                                   true,
	{Group: "storage.k8s.io", Kind: "CSIDriver"}:                                      true,
	{Group: "storage.k8s.io", Kind: "CSINode"}:                                        true,
	{Group: "storage.k8s.io", Kind: "VolumeAttachment"}:                               true,
	{Group: "storage.k8s.io", Kind: "VolumeAttributesClass"}:                          true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:                               true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                      true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:                                true,
	{Group: "networking.k8s.io", Kind: "IPAddress"}:                                   true,
	{Group: "networking.k8s.io", Kind: "ServiceCIDR"}:                                 true,
	{Group: "certificates.k8s.io", Kind: "CertificateSigningRequest"}:                 true,
	{Group: "certificates.k8s.io", Kind: "ClusterTrustBundle"}:                        true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "FlowSchema"}:                       true,
	{Group: "flowcontrol.apiserver.k8s.io", Kind: "PriorityLevelConfiguration"}:       true,
	{Group: "resource.k8s.io", Kind: "DeviceClass"}:                                   true,
	{Group: "resource.k8s.io", Kind: "ResourceSlice"}:                                 true,
}

// NeededScope returns the scope w's chart needs, as renders show it (its
// defaults and each sample: Render; not toggled options: opening the scope
// for what a user may turn on is theirs to decide): cluster-scoped
// objects, and objects put in a namespace of their own. Each reason names
// an object and the values it was rendered with.
func NeededScope(w watches.Watch, renders []Rendered) (watches.Scope, []string) {
	var s watches.Scope
	cluster := map[schema.GroupKind]bool{}
	for gk := range clusterScopedKinds {
		cluster[gk] = true
	}
	for _, gk := range chartCRDScopes(w, renders) {
		cluster[gk] = true
	}
	whats := map[string][]string{}
	var order []string
	namespaces := map[string]bool{}
	for _, r := range renders {
		for _, o := range r.Objects {
			gk, name, ns := identity(o)
			var why string
			switch {
			case gk == crdGK && (r.What != defaultsRender || w.CRDPolicy() == watches.CRDPolicySkip):
				continue // refused unless the defaults render it; skip applies none
			case gk == crdGK:
				// Never released (the crds policy applies it: crdRules), but
				// admitted against the scope as the cluster-scoped object it is.
				s.ClusterScoped = true
				why = fmt.Sprintf("scope.clusterScoped: the templated CRD %s is cluster-scoped", name)
			case cluster[gk]:
				s.ClusterScoped = true
				why = fmt.Sprintf("scope.clusterScoped: %s %s is cluster-scoped", gk.Kind, name)
			case ns != "" && ns != renderNamespace:
				namespaces[ns] = true
				why = fmt.Sprintf("scope.namespaces %s: %s %s goes there", ns, gk.Kind, name)
			default:
				continue
			}
			if whats[why] == nil {
				order = append(order, why)
			}
			if !slices.Contains(whats[why], r.What) {
				whats[why] = append(whats[why], r.What)
			}
		}
	}
	sort.Strings(order) // a template file's documents come in no fixed order
	reasons := make([]string, 0, len(order))
	for _, why := range order {
		reasons = append(reasons, fmt.Sprintf("%s (%s)", why, strings.Join(whats[why], ", ")))
	}
	for ns := range namespaces {
		s.Namespaces = append(s.Namespaces, ns)
	}
	sort.Strings(s.Namespaces)
	return s, reasons
}

// identity returns an object's group and kind, name and namespace.
func identity(o map[string]any) (schema.GroupKind, string, string) {
	api, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	gv, _ := schema.ParseGroupVersion(api)
	md, _ := o["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	return schema.GroupKind{Group: gv.Group, Kind: kind}, name, ns
}

// chartCRDScopes returns the kinds of the cluster-scoped CRDs w's chart
// ships, in crds/ or in its rendered templates.
func chartCRDScopes(w watches.Watch, renders []Rendered) []schema.GroupKind {
	var objs []map[string]any
	for _, f := range w.Chart.CRDObjects() {
		objs = append(objs, splitYAML(f.File.Data)...)
	}
	for _, r := range renders {
		objs = append(objs, r.Objects...)
	}
	var out []schema.GroupKind
	for _, o := range objs {
		gk, _, _ := identity(o)
		if gk.Group != "apiextensions.k8s.io" || gk.Kind != "CustomResourceDefinition" {
			continue
		}
		spec, _ := o["spec"].(map[string]any)
		names, _ := spec["names"].(map[string]any)
		group, _ := spec["group"].(string)
		kind, _ := names["kind"].(string)
		if scope, _ := spec["scope"].(string); scope == "Cluster" && kind != "" {
			out = append(out, schema.GroupKind{Group: group, Kind: kind})
		}
	}
	return out
}

// splitYAML returns the objects of a multi-document YAML file; documents
// that do not parse are skipped (Helm reports them when it installs).
func splitYAML(b []byte) []map[string]any {
	var out []map[string]any
	for _, doc := range releaseutil.SplitManifests(string(b)) {
		var obj map[string]any
		if yaml.Unmarshal([]byte(doc), &obj) == nil && len(obj) > 0 {
			out = append(out, obj)
		}
	}
	return out
}
