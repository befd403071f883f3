package manifests

import "strings"

// Plural returns the lower-case plural resource name of a kind, by the
// English rules Kubernetes tooling uses (WebApp -> webapps, Policy ->
// policies, Ingress -> ingresses).
func Plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "x"), strings.HasSuffix(k, "z"),
		strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "sh"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsAny(k[len(k)-2:len(k)-1], "aeiou"):
		return k[:len(k)-1] + "ies"
	default:
		return k + "s"
	}
}
