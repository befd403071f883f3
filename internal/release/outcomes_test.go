package release

import (
	"fmt"
	"strings"
	"testing"

	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// outcomeFamilies are the counters of what actions came to, by kind.
var outcomeFamilies = map[string]bool{"chartkeeper_action_failures_total": true, "chartkeeper_remediations_total": true}

// outcomeCounts reads the outcome counters from the operator's registry, by
// series (`name{label="value",...}`, labels sorted).
func outcomeCounts(t *testing.T) map[string]float64 {
	t.Helper()
	mfs, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !outcomeFamilies[mf.GetName()] {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetCounter().GetValue()
		}
	}
	return out
}

// checkCounted checks that every outcome series grew by what want says
// (and the others not at all).
func checkCounted(t *testing.T, before, after, want map[string]float64) {
	t.Helper()
	for k, v := range after {
		if d := v - before[k]; d != want[k] {
			t.Errorf("%s grew by %v, want %v", k, d, want[k])
		}
	}
	for k, v := range want {
		if _, ok := after[k]; !ok && v != 0 {
			t.Errorf("%s not recorded, want it to grow by %v", k, v)
		}
	}
}
