package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// StatusChange is what a status write changed.
type StatusChange string

// What a status write can change.
const (
	// StatusReworded: only condition messages and status.inventory, written
	// once the debounce let it (a rollout's progress).
	StatusReworded StatusChange = "reworded"
	// StatusChanged: more than that (a condition's status or reason, the
	// observed generation, the release, an attempt), or the first write of
	// this process for the resource.
	StatusChanged StatusChange = "changed"
)

const statusWritesHelp = "Status writes of custom resources, by custom resource kind, the reason of the Ready condition written, and what changed (reworded: only condition messages and the inventory; changed: more)."

var statusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "chartkeeper_status_writes_total", Help: statusWritesHelp,
}, []string{"kind", "reason", "change"})

func init() { crmetrics.Registry.MustRegister(statusWrites) }

// ObserveStatusWrite counts one status written for a resource of kind,
// whose Ready condition has reason (empty: no Ready condition).
func ObserveStatusWrite(kind, reason string, change StatusChange) {
	statusWrites.WithLabelValues(kind, reason, string(change)).Inc()
}
