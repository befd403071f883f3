package watches

import (
	"fmt"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// builtinNames are the short names and resource names (plural and
// singular) of Kubernetes' built-in API resources, as `kubectl
// api-resources` lists them (v1.36, the
// version bin/kube-apiserver serves), and kubectl's category "all". A kind
// may not take one as a short name: kubectl resolves it to the built-in
// resource first. CRDs from other projects in a cluster are not known at
// generation time: a watch whose derived short name they already use
// sets its own (shortNames).
var builtinNames = setOf(
	// short names
	"cs", "cm", "ep", "ev", "limits", "ns", "no", "pvc", "pv", "po", "rc", "quota", "sa", "svc",
	"crd", "crds", "ds", "deploy", "rs", "sts", "hpa", "cj", "csr", "ing", "netpol", "pdb", "pc", "sc",
	"vac", "ip", "all",
	// resource names (plural, singular)
	"bindings", "binding", "componentstatuses", "componentstatus", "configmaps", "configmap", "endpoints",
	"events", "event", "limitranges", "limitrange", "namespaces", "namespace", "nodes", "node",
	"persistentvolumeclaims", "persistentvolumeclaim", "persistentvolumes", "persistentvolume", "pods", "pod",
	"podtemplates", "podtemplate", "replicationcontrollers", "replicationcontroller", "resourcequotas", "resourcequota",
	"secrets", "secret", "serviceaccounts", "serviceaccount", "services", "service",
	"mutatingwebhookconfigurations", "validatingwebhookconfigurations", "validatingadmissionpolicies", "validatingadmissionpolicybindings",
	"customresourcedefinitions", "customresourcedefinition", "apiservices", "apiservice",
	"controllerrevisions", "daemonsets", "daemonset", "deployments", "deployment", "replicasets", "replicaset", "statefulsets", "statefulset",
	"selfsubjectreviews", "tokenreviews", "localsubjectaccessreviews", "selfsubjectaccessreviews", "selfsubjectrulesreviews", "subjectaccessreviews",
	"horizontalpodautoscalers", "horizontalpodautoscaler", "cronjobs", "cronjob", "jobs", "job",
	"certificatesigningrequests", "certificatesigningrequest", "leases", "lease",
	"endpointslices", "endpointslice", "flowschemas", "prioritylevelconfigurations",
	"ingressclasses", "ingressclass", "ingresses", "ingress", "networkpolicies", "networkpolicy",
	"runtimeclasses", "runtimeclass", "poddisruptionbudgets", "poddisruptionbudget",
	"clusterrolebindings", "clusterrolebinding", "clusterroles", "clusterrole", "rolebindings", "rolebinding", "roles", "role",
	"priorityclasses", "priorityclass", "csidrivers", "csidriver", "csinodes", "csinode", "csistoragecapacities",
	"storageclasses", "storageclass", "volumeattachments", "volumeattachment", "volumeattributesclasses",
	"mutatingadmissionpolicies", "mutatingadmissionpolicybindings", "ipaddresses", "servicecidrs",
	"deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices",
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// IsBuiltinName reports whether name is a short name or resource name of
// a built-in Kubernetes resource (or kubectl's category "all").
func IsBuiltinName(name string) bool { return builtinNames[name] }

// DerivedShortName is the short name a kind gets unless its watch sets
// shortNames: its capitals in lower case (WebApp: wa, EtcdCluster: ec), as
// kubebuilder users write +kubebuilder:resource:shortName=; "" when the
// kind has fewer than two.
func DerivedShortName(kind string) string {
	var b strings.Builder
	for _, r := range kind {
		if unicode.IsUpper(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	if b.Len() < 2 {
		return ""
	}
	return b.String()
}

// validateShortNames checks the short names a watch sets: lower-case
// DNS labels, none a built-in resource's.
func validateShortNames(names []string, add func(field, format string, args ...any)) {
	for _, n := range names {
		switch {
		case len(validation.IsDNS1035Label(n)) > 0:
			add("shortNames", "%q must be lower case letters and digits, starting with a letter", n)
		case IsBuiltinName(n):
			add("shortNames", "%q is a short name or resource name of a built-in Kubernetes resource: kubectl would resolve it to that", n)
		}
	}
}

// resolveShortNames gives each watch that sets no shortNames its derived
// one where free: not a built-in name, nor another kind's singular or
// short name (a set one, or one an earlier watch derived). Watches of one
// group and kind (two versions) share theirs. Two kinds setting the same
// short name, or one equal to another kind's singular, is an error.
func resolveShortNames(ws []Watch) []error {
	type owner struct{ group, kind string }
	taken := map[string]owner{}
	var errs []error
	for _, w := range ws {
		taken[strings.ToLower(w.Kind)] = owner{w.Group, w.Kind}
	}
	for i, w := range ws {
		for _, n := range w.ShortNames {
			if o, ok := taken[n]; ok && o != (owner{w.Group, w.Kind}) {
				errs = append(errs, &FieldError{Index: i, Kind: w.Kind, Field: "shortNames",
					Detail: fmt.Sprintf("short name %q is already used by %s", n, o.kind)})
			}
			taken[n] = owner{w.Group, w.Kind}
		}
	}
	derived := map[owner][]string{}
	for i := range ws {
		w := &ws[i]
		if w.ShortNames != nil {
			continue
		}
		me := owner{w.Group, w.Kind}
		if names, ok := derived[me]; ok {
			w.ShortNames = names
			continue
		}
		n := DerivedShortName(w.Kind)
		if o, used := taken[n]; n == "" || IsBuiltinName(n) || used && o != me {
			derived[me] = nil
			continue
		}
		taken[n] = me
		w.ShortNames = []string{n}
		derived[me] = w.ShortNames
	}
	return errs
}
