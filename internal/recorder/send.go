package recorder

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
)

// drainFor bounds how long a stopping recorder keeps sending what is
// queued.
const drainFor = 5 * time.Second

// Start sends queued Events until ctx ends, then what is still queued for
// at most a few seconds. It implements manager.Runnable.
func (r *Recorder) Start(ctx context.Context) error {
	done := make(chan struct{})
	for range senders {
		go func() {
			defer func() { done <- struct{}{} }()
			r.send(ctx)
		}()
	}
	<-ctx.Done()
	for range senders {
		<-done
	}
	drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainFor)
	defer cancel()
	for {
		select {
		case q := <-r.queue:
			r.try(drain, q, false)
		default:
			return nil
		}
	}
}

// send takes Events off the queue until ctx ends.
func (r *Recorder) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-r.queue:
			r.try(ctx, q, true)
		}
	}
}

// try creates q's Event; failing for a passing reason, it queues it again
// after RetryAfter (when retry is set and tries remain).
func (r *Recorder) try(ctx context.Context, q *queued, retry bool) {
	err := r.create(ctx, q.ev)
	q.tries++
	switch {
	case err == nil:
		return
	case !passing(err):
		r.log.Error(err, "the API server refused an Event", "reason", q.ev.Reason, "regarding", q.ev.Regarding.Name)
		return
	case !retry || q.tries >= MaxTries || ctx.Err() != nil:
		r.log.Error(err, "could not create an Event", "reason", q.ev.Reason, "regarding", q.ev.Regarding.Name, "tries", q.tries)
		return
	}
	time.AfterFunc(RetryAfter, func() { r.enqueue(q) })
}

// passing reports whether err may not happen again: the API server
// unreachable or busy, rather than refusing the Event.
func passing(err error) bool {
	var status apierrors.APIStatus
	var construct *rest.RequestConstructionError
	switch {
	case errors.As(err, &construct):
		return false
	case errors.As(err, &status):
		return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
			apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err)
	default:
		return true // a transport error: connection refused, reset, EOF, a timeout
	}
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: a replica
// sends what it recorded, leader or not.
func (r *Recorder) NeedLeaderElection() bool { return false }
