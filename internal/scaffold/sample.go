package scaffold

import (
	"fmt"
	"path/filepath"
	"strings"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/crdschema"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// checkSample checks the sample create-api writes for the new kind (when
// it writes one: a sample that exists is the user's) against the CRD it
// writes, as the API server checks a create with strict field
// validation: a sample the CRD refuses is an error naming the fields.
func checkSample(o Options, files map[string][]byte) error {
	w := watches.Watch{Group: o.Group, Version: o.Version, Kind: o.Kind}
	rel := filepath.Join("samples", manifests.SampleFile(w))
	sample, ok := files[rel]
	if !ok {
		return nil
	}
	crdRel := filepath.Join("crd", "bases", fmt.Sprintf("%s_%s.yaml", o.Group, manifests.Plural(o.Kind)))
	crd := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(files[crdRel], crd); err != nil {
		return fmt.Errorf("config/%s: %w", crdRel, err)
	}
	if err := crdschema.Admit(crd, sample); err != nil {
		return fmt.Errorf("the generated CRD (config/%s) refuses the generated sample (config/%s): kubectl apply would fail:\n%s\n"+
			"the sample is the chart's values.yaml: its defaults break the chart's own values.schema.json there (the API server checks what Helm may not, such as formats): fix the chart's defaults or its schema",
			crdRel, rel, indent(err.Error()))
	}
	return nil
}

// indent indents every line of s by two spaces.
func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
