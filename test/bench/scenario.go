package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Scenario is a workload: the chart every custom resource releases, the
// spec each is created with and the change that upgrades it.
//
// Every scenario's chart follows two rules the observer relies on: each
// object it releases carries the label releaseLabel with the release's
// name, and its Deployment's Pod template carries the current message in
// the annotation messageAnnotation. Ready then means the same for every
// scenario (observer.go, rolledOut).
type Scenario struct {
	// Name is what BENCH_SCENARIO and Config.Scenario call it.
	Name string
	// Chart is the chart's directory, relative to the repository's root.
	Chart string
	// Kind is the custom resources' kind, in benchGroup/benchVersion.
	Kind string
	// Selector is a label selector matching every object the chart
	// releases (and nothing else the cluster holds): the observer watches
	// only those.
	Selector string
	// About says in a few words what each release holds.
	About string
	// spec is a custom resource's spec, carrying message; patch is the
	// merge patch that changes a spec's message.
	spec, patch func(message string) map[string]any
}

// The two messages every release goes through: installed with the first,
// upgraded to the second.
const (
	messageV1 = "v1"
	messageV2 = "v2"
)

// The benchmark's API group and version; each scenario has its own kind.
const (
	benchGroup   = "bench.chartkeeper.dev"
	benchVersion = "v1"
)

// Labels and annotations every scenario's chart writes (see Scenario).
const (
	releaseLabel      = "app.kubernetes.io/instance"
	messageAnnotation = "bench.chartkeeper.dev/message"
)

// ScenarioDefault is the scenario used when none is named.
const ScenarioDefault = "default"

// scenarios are the workloads a run can measure.
var scenarios = []Scenario{
	{
		Name: ScenarioDefault, Chart: "test/bench/chart", Kind: "Bench",
		Selector: "app.kubernetes.io/part-of=chartkeeper-bench",
		About:    "a Deployment (1 replica), a Service and a ConfigMap",
		spec:     func(m string) map[string]any { return map[string]any{"replicas": int64(1), "message": m} },
		patch:    func(m string) map[string]any { return map[string]any{"message": m} },
	},
	{
		// Shaped like the podinfo chart Flux's benchmark releases, with the
		// values that benchmark gives it (fluxcd/flux-benchmark,
		// timoni/modules/flux-hr-bench): no replicas, a ServiceAccount, an
		// Ingress of class nginx.
		Name: "podinfo", Chart: "test/bench/podinfo", Kind: "Podinfo",
		Selector: "app.kubernetes.io/name=podinfo",
		About:    "a Deployment scaled to 0, a ServiceAccount, a Service and an Ingress",
		spec: func(m string) map[string]any {
			return map[string]any{
				"replicaCount":   int64(0),
				"serviceAccount": map[string]any{"enabled": true},
				"ingress":        map[string]any{"enabled": true, "className": "nginx"},
				"ui":             map[string]any{"message": m},
			}
		},
		patch: func(m string) map[string]any { return map[string]any{"ui": map[string]any{"message": m}} },
	},
}

// LookupScenario returns the named scenario; "" is the default.
func LookupScenario(name string) (Scenario, error) {
	if name == "" {
		name = ScenarioDefault
	}
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		if s.Name == name {
			return s, nil
		}
		names[i] = s.Name
	}
	return Scenario{}, fmt.Errorf("bench: no scenario %q (known: %s)", name, strings.Join(names, ", "))
}

// gvk is the scenario's custom resource kind.
func (s Scenario) gvk() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: benchGroup, Version: benchVersion, Kind: s.Kind}
}

// values are the chart values of each revision: the spec the custom
// resource is created with, then that spec after the upgrade's merge
// patch, as the API server applies it.
func (s Scenario) values() (v1, v2 map[string]any) {
	return s.spec(messageV1), mergePatch(s.spec(messageV1), s.patch(messageV2))
}

// mergePatch applies a JSON merge patch (RFC 7386) to doc, in place, and
// returns it: objects merge key by key, null deletes, anything else
// replaces.
func mergePatch(doc, patch map[string]any) map[string]any {
	for k, p := range patch {
		if p == nil {
			delete(doc, k)
			continue
		}
		pm, pIsMap := p.(map[string]any)
		dm, dIsMap := doc[k].(map[string]any)
		switch {
		case pIsMap && dIsMap:
			doc[k] = mergePatch(dm, pm)
		case pIsMap:
			doc[k] = mergePatch(map[string]any{}, pm)
		default:
			doc[k] = p
		}
	}
	return doc
}

// ParseSizes reads BENCH_N: one number of custom resources, or a comma
// list of them measured one after another ("100,500,1000"); "" is 100.
func ParseSizes(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return []int{100}, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || slices.Contains(out, n) {
			return nil, fmt.Errorf("BENCH_N=%q: want a positive integer, or a comma list of different ones such as 100,500,1000", s)
		}
		out = append(out, n)
	}
	return out, nil
}
