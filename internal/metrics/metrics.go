package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	actions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "chartkeeper_helm_actions_total",
		Help: "Helm actions run, by action and result (success, failure).",
	}, []string{"action", "result"})
	actionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "chartkeeper_helm_action_duration_seconds",
		Help:    "Duration of Helm actions, by action and result.",
		Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"action", "result"})
	unwatched = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "chartkeeper_unwatched_releases",
		Help: "Releases found at start whose custom resource kind is not in watches.yaml, by kind (Kind.group): their resources keep chartkeeper's finalizer with nothing to remove it.",
	}, []string{"kind"})
	sourcesWatched = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "chartkeeper_values_sources_watched",
		Help: "ConfigMaps and Secrets watched because custom resources take values from them (valuesFrom), by kind: one watch per object, shared by the resources that name it.",
	}, []string{"kind"})
	// States counts custom resources per kind and release state.
	States = newStateTracker()
)

func init() {
	crmetrics.Registry.MustRegister(actions, actionDuration, unwatched, sourcesWatched, States)
}

// ObserveAction records one Helm action.
func ObserveAction(action string, err error, took time.Duration) {
	actions.WithLabelValues(action, result(err)).Inc()
	actionDuration.WithLabelValues(action, result(err)).Observe(took.Seconds())
}

// SetUnwatched records how many releases of a kind no watch serves were
// found (see operator's unwatched-kinds report).
func SetUnwatched(kind string, releases int) {
	unwatched.WithLabelValues(kind).Set(float64(releases))
}

// SetSourcesWatched records how many objects of a kind (ConfigMap,
// Secret) are watched for valuesFrom.
func SetSourcesWatched(kind string, n int) {
	sourcesWatched.WithLabelValues(kind).Set(float64(n))
}

// StateTracker is a collector of the current state of every custom resource.
type StateTracker struct {
	mu    sync.Mutex
	state map[string][2]string // resource key -> {kind, state}
	desc  *prometheus.Desc
}

func newStateTracker() *StateTracker {
	return &StateTracker{
		state: map[string][2]string{},
		desc: prometheus.NewDesc("chartkeeper_releases", "Custom resources per kind and release state.",
			[]string{"kind", "state"}, nil),
	}
}

// Set records the state of one resource.
func (s *StateTracker) Set(key, kind, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[key] = [2]string{kind, state}
}

// Delete forgets a resource.
func (s *StateTracker) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.state, key)
}

// Len counts the resources whose state is recorded.
func (s *StateTracker) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.state)
}

// Describe implements prometheus.Collector.
func (s *StateTracker) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

// Collect implements prometheus.Collector.
func (s *StateTracker) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	counts := map[[2]string]int{}
	for _, ks := range s.state {
		counts[ks]++
	}
	s.mu.Unlock()
	for ks, n := range counts {
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, float64(n), ks[0], ks[1])
	}
}
