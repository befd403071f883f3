package ownership

import "strings"

// ResourcePolicyAnnotation is Helm's per-object resource policy; with the
// value "keep" Helm leaves the object in place when it uninstalls the
// release (or drops the object in an upgrade).
const ResourcePolicyAnnotation = "helm.sh/resource-policy"

// Kept reports whether annotations mark an object helm.sh/resource-policy:
// keep, read as Helm reads it (trimmed, any case). A kept object outlives
// its release and custom resource: it gets no ownerReference, deletion does
// not wait for it, and it is never pruned.
func Kept(annotations map[string]string) bool {
	v, ok := annotations[ResourcePolicyAnnotation]
	return ok && strings.ToLower(strings.TrimSpace(v)) == "keep"
}
