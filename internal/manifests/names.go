package manifests

import (
	"strings"

	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"
)

// pluralExceptions are the kinds whose resource name is not the regular
// plural: the list Kubernetes' own code generators (client-gen) give the
// gengo pluralizer.
var pluralExceptions = map[string]string{"Endpoints": "Endpoints"}

// unpluralizedSuffixes: a kind ending in one of these is its own plural, as
// the API machinery's RESTMapper guesses it (meta.UnsafeGuessKindToResource).
var unpluralizedSuffixes = []string{"endpoints"}

var pluralNamer = namer.NewAllLowercasePluralNamer(pluralExceptions)

// Plural returns the lower-case plural resource name of a kind, as
// Kubernetes names its own resources: gengo's pluralizer (WebApp ->
// webapps, Policy -> policies, Ingress -> ingresses, Leaf -> leaves) with
// the exceptions Kubernetes declares (Endpoints -> endpoints).
func Plural(kind string) string {
	k := strings.ToLower(kind)
	for _, s := range unpluralizedSuffixes {
		if strings.HasSuffix(k, s) {
			return k
		}
	}
	return pluralNamer.Name(&types.Type{Name: types.Name{Name: kind}})
}
