package manifests

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// statusSchemaOf is the status schema of w's kind: StatusSchema, and
// status.deployedRelease when the watch keeps the Helm operators' status
// shape (statusCompat: HelmOperator): a structural schema prunes the
// fields it does not name.
func statusSchemaOf(w watches.Watch) apiextv1.JSONSchemaProps {
	s := StatusSchema()
	if w.HelmOperatorStatus() {
		s.Properties["deployedRelease"] = apiextv1.JSONSchemaProps{
			Type:        "object",
			Description: "The release's name and manifest, as helm-operator-plugins and operator-sdk's Helm operator write them (statusCompat: HelmOperator); Secrets' data redacted, cut to 256 KiB.",
			Properties: map[string]apiextv1.JSONSchemaProps{
				"name":     str("Release name."),
				"manifest": str("The manifest of the deployed revision."),
				"revision": integer("The revision the manifest is of."),
			},
		}
	}
	return s
}
