package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// remediationsInFlight is how many releases of a kind are being remediated
// now: rolled back (or uninstalled) after a failure and not yet in sync
// and ready again. remediation.maxInFlight bounds how many a readiness
// timeout may add.
var remediationsInFlight = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "chartkeeper_remediations_in_flight",
	Help: "Releases being remediated (rolled back or uninstalled after a failure, not yet in sync and ready again), by custom resource kind (Kind.group); remediation.maxInFlight bounds how many a readiness timeout may add.",
}, []string{"kind"})

func init() { crmetrics.Registry.MustRegister(remediationsInFlight) }

// SetRemediationsInFlight records how many releases of kind (Kind.group)
// are being remediated.
func SetRemediationsInFlight(kind string, n int) {
	remediationsInFlight.WithLabelValues(kind).Set(float64(n))
}
