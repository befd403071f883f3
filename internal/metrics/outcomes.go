package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

const (
	failuresHelp     = "Helm actions that failed, by custom resource kind and action."
	remediationsHelp = "Remediations run (rollback or uninstall of a failed release), by custom resource kind, action and result (success, failure)."
)

var (
	failures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "chartkeeper_action_failures_total", Help: failuresHelp,
	}, []string{"kind", "action"})
	remediations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "chartkeeper_remediations_total", Help: remediationsHelp,
	}, []string{"kind", "action", "result"})
)

func init() { crmetrics.Registry.MustRegister(failures, remediations) }

// ObserveOutcome records what one Helm action on a resource of kind came
// to: a failure counts in chartkeeper_action_failures_total, a remediation
// (whatever its result) in chartkeeper_remediations_total.
func ObserveOutcome(kind, action string, remediation bool, err error) {
	if err != nil {
		failures.WithLabelValues(kind, action).Inc()
	}
	if remediation {
		remediations.WithLabelValues(kind, action, result(err)).Inc()
	}
}

// result is the result label of an action's error.
func result(err error) string {
	if err != nil {
		return "failure"
	}
	return "success"
}
