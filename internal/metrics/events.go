package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// eventsDropped counts the Events not sent because the recorder's queue
// was full (package recorder).
var eventsDropped = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "chartkeeper_events_dropped_total",
	Help: "Events not sent because the queue of Events to send was full.",
})

func init() { crmetrics.Registry.MustRegister(eventsDropped) }

// EventDropped counts an Event dropped from a full queue.
func EventDropped() { eventsDropped.Inc() }
