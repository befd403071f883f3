package manifests

import (
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// The operator may list Pods and get claims (to say why a workload is not
// ready) exactly when a chart releases a kind that runs Pods, whether the
// release runs as the operator or as a ServiceAccount it impersonates.
func TestPodReasonRules(t *testing.T) {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\n"
	for _, tc := range []struct {
		name, template string
		impersonate    bool
		pods, claims   string // verbs ("": no rule)
	}{
		{"ConfigMaps only", cm, false, "", ""},
		{"a Job", cm + "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec: {template: {spec: {containers: [{name: c, image: i}]}}}\n", false, "[list]", "[get]"},
		{"a DaemonSet, impersonating", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n", true, "[list]", "[get]"},
		{"a bare Pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", false, "[get list watch create update patch delete]", "[get]"},
		{"a StatefulSet with its claim", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\n",
			false, "[list]", "[get list watch create update patch delete]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "p", Version: "1.0.0"},
				Templates: []*chart.File{{Name: "templates/all.yaml", Data: []byte(tc.template)}}}
			w := watches.Watch{Group: "pods.chartkeeper.dev", Version: "v1", Kind: "P", Chart: ch}
			if tc.impersonate {
				w.Impersonate = &watches.Impersonate{ServiceAccount: "releaser"}
			}
			role, _, err := Role([]watches.Watch{w}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			verbs := map[string]string{}
			for _, r := range role.Rules {
				for _, res := range r.Resources {
					if r.APIGroups[0] == "" && len(r.ResourceNames) == 0 {
						verbs[res] = fmt.Sprint(r.Verbs)
					}
				}
			}
			if verbs["pods"] != tc.pods || verbs["persistentvolumeclaims"] != tc.claims {
				t.Errorf("pods %q, claims %q; want %q, %q", verbs["pods"], verbs["persistentvolumeclaims"], tc.pods, tc.claims)
			}
		})
	}
}
