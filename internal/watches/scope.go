package watches

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"
)

// AnyNamespace in Scope.Namespaces allows every namespace.
const AnyNamespace = "*"

// Scope says where a watch's releases may put objects. By default a
// release's objects must live in the release namespace: a custom resource
// cannot make the operator create an object in another namespace or a
// cluster-scoped one (a ClusterRoleBinding, say), whatever its spec renders.
type Scope struct {
	// Namespaces, besides the release namespace, that released objects may
	// be put in; "*" allows any. Default: none.
	Namespaces []string `json:"namespaces,omitempty"`
	// ClusterScoped allows cluster-scoped objects. Default false.
	ClusterScoped bool `json:"clusterScoped,omitempty"`
}

// AllowsNamespace reports whether an object may go to ns when the release
// lives in releaseNamespace. A nil Scope is the default.
func (s *Scope) AllowsNamespace(ns, releaseNamespace string) bool {
	if ns == "" || ns == releaseNamespace {
		return true
	}
	return s != nil && (slices.Contains(s.Namespaces, AnyNamespace) || slices.Contains(s.Namespaces, ns))
}

// AllowsClusterScoped reports whether cluster-scoped objects may be released.
func (s *Scope) AllowsClusterScoped() bool { return s != nil && s.ClusterScoped }

func (s *Scope) validate(add func(field, format string, args ...any)) {
	if s == nil {
		return
	}
	for _, ns := range s.Namespaces {
		if ns == AnyNamespace {
			continue
		}
		for _, msg := range validation.IsDNS1123Label(ns) {
			add("scope.namespaces", "%q is not a namespace name or %q: %s", ns, AnyNamespace, msg)
		}
	}
}
