package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// storageReads counts the reads of release Secrets that the release
// storage sent to the API server because its caches could not answer
// (a Secret written by someone else, a query it does not serve): how well
// the caches serve Helm's reads. Informers' own LISTs of Secrets are not
// among them (chartkeeper_api_requests_total counts those too).
var storageReads = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "chartkeeper_release_storage_reads_total",
	Help: "Reads of release Secrets the release storage sent to the API server (its caches could not answer), by verb (get, list).",
}, []string{"verb"})

func init() {
	crmetrics.Registry.MustRegister(storageReads)
	for _, verb := range []string{"get", "list"} {
		storageReads.WithLabelValues(verb) // present from the start, at 0
	}
}

// StorageRead counts a read of release Secrets sent to the API server by
// the release storage; verb is "get" or "list".
func StorageRead(verb string) { storageReads.WithLabelValues(verb).Inc() }
