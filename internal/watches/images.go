package watches

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ImagesConfig relocates a watch's released images to a private mirror
// (air-gapped clusters). Unset: the global --image-registry and
// --image-pull-secret flags of `chartkeeper run` apply, if given.
type ImagesConfig struct {
	// Registry is the mirror: host[:port] and an optional path prefix.
	// Each image keeps its repository path, tag and digest.
	Registry string `json:"registry,omitempty"`
	// PullSecrets are Secrets (in the release namespace) added to every
	// released Pod template's imagePullSecrets.
	PullSecrets []string `json:"pullSecrets,omitempty"`
}

// registryRef is host[:port] with optional lower-case path components.
var registryRef = regexp.MustCompile(`^[a-zA-Z0-9.-]+(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$`)

// ValidateImages checks an images setting; field prefixes the names in
// the messages ("images" in watches.yaml, "--image-registry" on the
// command line).
func ValidateImages(c *ImagesConfig, add func(field, format string, args ...any)) {
	if c == nil {
		return
	}
	if c.Registry != "" && !registryRef.MatchString(c.Registry) {
		add("images.registry", "%q is not host[:port][/path] (no scheme, no tag)", c.Registry)
	}
	for _, s := range c.PullSecrets {
		for _, msg := range validation.IsDNS1123Subdomain(s) {
			add("images.pullSecrets", "%q is not a Secret name: %s", s, msg)
		}
	}
	if c.Registry == "" && len(c.PullSecrets) == 0 {
		add("images", "set registry, pullSecrets or both")
	}
}
