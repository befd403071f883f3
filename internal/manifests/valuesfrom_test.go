package manifests

import (
	"fmt"
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// A watch's valuesFrom adds reading (get, list, watch) of the kinds it
// names, and only those; a chart that renders neither gets them from
// valuesFrom alone. Secrets are granted for Helm's release storage anyway.
func TestRoleReadsWhatValuesFromNames(t *testing.T) {
	ch, err := loader.Load("../../test/e2e/testdata/charts/exporter") // renders a Secret, no ConfigMap
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		valuesFrom []watches.ValuesReference
		configMaps []string // the verbs on configmaps
	}{
		{"no valuesFrom", nil, nil},
		{"a Secret", []watches.ValuesReference{{Kind: watches.SourceSecret, Name: "x"}}, nil},
		{"a ConfigMap", []watches.ValuesReference{{Kind: watches.SourceConfigMap, Name: "x"}}, []string{"get", "list", "watch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watches.Watch{Group: "test.chartkeeper.dev", Version: "v1", Kind: "Exporter", Chart: ch, ValuesFrom: tc.valuesFrom}
			role, _, err := Role([]watches.Watch{w}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			verbs := map[string][]string{}
			for _, r := range role.Rules {
				for _, res := range r.Resources {
					if slices.Contains(r.APIGroups, "") {
						verbs[res] = r.Verbs
					}
				}
			}
			if fmt.Sprint(verbs["configmaps"]) != fmt.Sprint(tc.configMaps) {
				t.Errorf("configmaps: %v, want %v", verbs["configmaps"], tc.configMaps)
			}
			for _, v := range []string{"get", "list", "watch"} {
				if !slices.Contains(verbs["secrets"], v) {
					t.Errorf("secrets: %v, want %s", verbs["secrets"], v)
				}
			}
		})
	}
}
