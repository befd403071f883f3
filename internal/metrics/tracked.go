package metrics

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// trackedHelp describes chartkeeper_tracked_resources.
const trackedHelp = "What the operator keeps in memory per custom resource or release, by store (the release engine's memos, the controllers' status book, ...): how many resources or releases each store holds anything of, read at each scrape. Every store holds nothing of a resource that is gone (deleted, its finalizer removed by hand, or relabelled to another shard): with no custom resource left, every store is at 0."

// trackedStores counts, at each scrape, the resources each in-memory store
// holds anything of. The engine and each controller register a function
// that counts theirs (TrackStores); counts of one store name are summed.
type trackedStores struct {
	mu    sync.Mutex
	funcs []func() map[string]int
	desc  *prometheus.Desc
}

var tracked = &trackedStores{desc: prometheus.NewDesc("chartkeeper_tracked_resources", trackedHelp, []string{"store"}, nil)}

func init() { crmetrics.Registry.MustRegister(tracked) }

// TrackStores adds count to what chartkeeper_tracked_resources reports:
// count returns, per store, how many resources (or releases) it holds
// anything of. It is called at each scrape, and must be cheap.
func TrackStores(count func() map[string]int) {
	tracked.mu.Lock()
	defer tracked.mu.Unlock()
	tracked.funcs = append(tracked.funcs, count)
}

// Describe implements prometheus.Collector.
func (s *trackedStores) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

// Collect implements prometheus.Collector.
func (s *trackedStores) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	funcs := append([]func() map[string]int(nil), s.funcs...)
	s.mu.Unlock()
	sums := map[string]int{"states": States.Len()}
	for _, f := range funcs {
		for store, n := range f() {
			sums[store] += n
		}
	}
	for store, n := range sums {
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, float64(n), store)
	}
}
