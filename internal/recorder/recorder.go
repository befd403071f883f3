// Package recorder sends the release engine's Events (events.k8s.io/v1):
// one Event created per call, from a bounded queue, by a few senders.
//
// # Why not client-go's recorder
//
// client-go's events/v1 broadcaster keeps a copy of every Event it sends
// for six to twelve minutes, to turn a repeat of it into a series. Its key
// is the regarding object's reference, resource version included. The
// engine's Events are about a custom resource whose status it writes after
// every step that records one, so no Event of chartkeeper's ever repeats
// another's key: the copies bought nothing and held about 1 KB per Event
// (1.7 MB of the operator's live heap at the end of make bench's upgrade
// at N=1,000, docs/benchmarks.md). This package keeps nothing of an Event once
// it is sent.
//
// # What it keeps of client-go's
//
// The Event is the one client-go's recorder makes (name, namespace, time,
// reporting controller and instance, regarding and related references).
// At most MaxQueued wait to be sent; an Event past that is dropped and
// counted (chartkeeper_events_dropped_total), as client-go's broadcaster
// drops past its 1,000 (the count is the caller's: New's dropped). An Event the API server could not take for a
// passing reason (unreachable, timeout, throttled, a 5xx) is tried again,
// at most MaxTries times in all; one it refused is not. Each Event is also
// logged at debug level (V(1)), as the manager's recorder logged it.
package recorder

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/tools/record/util"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
)

// The bounds of the queue and of the tries.
const (
	MaxQueued = 1000
	MaxTries  = 12
	senders   = 4
	// maxNote is what an Event's note may hold (the API server's bound).
	maxNote = 1024
)

// RetryAfter is how long a try that failed for a passing reason waits
// before the next.
var RetryAfter = 10 * time.Second

// CreateFunc creates an Event on the API server.
type CreateFunc func(ctx context.Context, ev *eventsv1.Event) error

// Recorder is an events.EventRecorder that keeps nothing of what it sent.
// Start it (a manager Runnable) to send; Events recorded before it starts
// wait in the queue.
type Recorder struct {
	scheme     *runtime.Scheme
	controller string
	instance   string
	create     CreateFunc
	clock      clock.PassiveClock
	log        logr.Logger
	dropped    func()

	queue chan *queued
}

var _ events.EventRecorder = &Recorder{}

type queued struct {
	ev    *eventsv1.Event
	tries int
}

// New returns a recorder reporting as controller (its instance: controller
// and the host's name, as client-go's), creating Events with create and
// calling dropped (if not nil) for each Event dropped from a full queue.
// The package stays a leaf of the module: the caller owns the metric.
func New(scheme *runtime.Scheme, controller string, create CreateFunc, dropped func(), log logr.Logger) *Recorder {
	host, _ := os.Hostname()
	if dropped == nil {
		dropped = func() {}
	}
	return &Recorder{
		scheme: scheme, controller: controller, instance: controller + "-" + host,
		create: create, clock: clock.RealClock{}, log: log, dropped: dropped,
		queue: make(chan *queued, MaxQueued),
	}
}

// Eventf implements events.EventRecorder.
func (r *Recorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	ev, err := r.event(regarding, related, eventtype, reason, action, fmt.Sprintf(note, args...))
	if err != nil {
		r.log.Error(err, "not recording an Event", "reason", reason)
		return
	}
	// In the log too, at debug level, as client-go's broadcaster does for
	// the manager's recorder.
	if debug := r.log.V(1); debug.Enabled() { // no arguments built for a line not written
		debug.Info("Event occurred", "object", klog.KRef(ev.Regarding.Namespace, ev.Regarding.Name),
			"kind", ev.Regarding.Kind, "apiVersion", ev.Regarding.APIVersion, "type", ev.Type, "reason", ev.Reason, "action", ev.Action, "note", ev.Note)
	}
	r.enqueue(&queued{ev: ev})
}

// event makes the Event client-go's recorder would.
func (r *Recorder) event(regarding, related runtime.Object, eventtype, reason, action, note string) (*eventsv1.Event, error) {
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		return nil, fmt.Errorf("event type %q is neither Normal nor Warning", eventtype)
	}
	ref, err := reference.GetReference(r.scheme, regarding)
	if err != nil {
		return nil, fmt.Errorf("a reference to the regarding object: %w", err)
	}
	var rel *corev1.ObjectReference
	if related != nil {
		rel, _ = reference.GetReference(r.scheme, related) // as client-go: optional
	}
	if len(note) > maxNote {
		note = note[:maxNote]
	}
	now := r.clock.Now()
	ns := ref.Namespace
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return &eventsv1.Event{
		ObjectMeta:          metav1.ObjectMeta{Name: util.GenerateEventName(ref.Name, now.UnixNano()), Namespace: ns},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             rel,
		Note:                note,
		Type:                eventtype,
	}, nil
}

// enqueue queues q, or drops it when the queue is full.
func (r *Recorder) enqueue(q *queued) {
	select {
	case r.queue <- q:
	default:
		r.dropped()
		r.log.V(1).Info("dropping an Event: the queue is full", "reason", q.ev.Reason, "regarding", q.ev.Regarding.Name)
	}
}
