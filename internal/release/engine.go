package release

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Engine runs release steps. It is safe for concurrent steps on different
// custom resources; steps on the same resource must not overlap (the
// controller's work queue guarantees it).
type Engine struct {
	helm Helm
	// meta reads the label-scoped metadata cache: release Secrets and
	// released objects (as PartialObjectMetadata).
	meta client.Reader
	// live reads and writes the API server directly (full objects for
	// readiness, drift checks and corrections, post-action checks).
	live client.Client
	// statuses, when set, reads released objects reduced to what their
	// readiness needs (readiness.Reduce), from a cache.
	statuses  client.Reader
	watchKind func(schema.GroupVersionKind) error
	recorder  events.EventRecorder
	clock     clock.PassiveClock
	jitter    func(time.Duration) time.Duration
	log       logr.Logger

	hooks *hooks.Registry

	expect  *expectations
	running *runningActions
	// remediating counts the releases being remediated, per kind (inflight.go).
	remediating *remediationsInFlight
	manifests   *revisionMemo[[]object]
	// rendered: what the last revisions read back rendered (rendered.go).
	rendered *renderedRevisions
	drift    *driftTracker
	ready    *objectMemo[readyAt]
	// podChecks: what the Pods of workloads not ready said, and when
	// they are read again (podreasons.go).
	podChecks *objectMemo[podCheck]
	proofs    *revisionMemo[provenance]
	// descriptions remembers who revisions' descriptions name (owner.go).
	descriptions *revisionMemo[describedAs]
	// sources reads the objects of watches' valuesFrom (valuesfrom.go).
	sources ValuesSources
	// signed: the release storage signs revisions (forgery.go); forged
	// remembers revisions found forged, unsigned what an unsigned latest
	// revision was found to name.
	signed   bool
	forged   *revisionMemo[string]
	unsigned *revisionMemo[unsignedVerdict]
	// impersonate makes the clients of releases that run as a
	// ServiceAccount (identity.go); nil: none.
	impersonate *impersonation
}

// Option configures NewEngine.
type Option func(*Engine)

// WithClock sets the clock (default: the real one). Tests move time with it.
func WithClock(c clock.PassiveClock) Option { return func(e *Engine) { e.clock = c } }

// WithJitter sets how a backoff wait is jittered (default: up to 20%
// longer, at random). Tests make it the identity.
func WithJitter(f func(time.Duration) time.Duration) Option { return func(e *Engine) { e.jitter = f } }

// WithLogger sets the logger (default: discard).
func WithLogger(l logr.Logger) Option { return func(e *Engine) { e.log = l } }

// WithRecorder sets where Events go (default: nowhere).
func WithRecorder(r events.EventRecorder) Option { return func(e *Engine) { e.recorder = r } }

// WithWatchKind sets the function that makes sure released objects of a
// kind are watched (default: none).
func WithWatchKind(f func(schema.GroupVersionKind) error) Option {
	return func(e *Engine) { e.watchKind = f }
}

// WithStatusCache sets a cache that reads released objects reduced to
// what their readiness needs (default: none; every read goes to the API
// server).
func WithStatusCache(r client.Reader) Option { return func(e *Engine) { e.statuses = r } }

// WithHooks sets the Go hooks run for each kind (default: none).
func WithHooks(r *hooks.Registry) Option { return func(e *Engine) { e.hooks = r } }

// NewEngine returns an Engine. hc runs Helm actions (internal/helm's
// *Client, or a fake), meta is the label-scoped metadata cache and live an
// uncached client; all are required.
func NewEngine(hc Helm, meta client.Reader, live client.Client, opts ...Option) (*Engine, error) {
	if hc == nil || meta == nil || live == nil {
		return nil, errors.New("release: helm client, metadata reader and live client are required")
	}
	e := &Engine{
		helm: hc, meta: meta, live: live,
		watchKind:   func(schema.GroupVersionKind) error { return nil },
		recorder:    noRecorder{},
		clock:       clock.RealClock{},
		jitter:      jitterBackoff,
		log:         logr.Discard(),
		expect:      newExpectations(),
		running:     newRunningActions(),
		remediating: newRemediationsInFlight(),
		manifests:   newMemo[int, []object](),
		rendered:    newRenderedRevisions(),
		drift:       newDriftTracker(),
		ready:       newObjectMemo[readyAt](),
		podChecks:   newObjectMemo[podCheck](),
		proofs:      newMemo[int, provenance](),
		forged:      newMemo[int, string](),
		unsigned:    newMemo[int, unsignedVerdict](),

		descriptions: newMemo[int, describedAs](),
		sources:      liveSources{c: live},
	}
	for _, o := range opts {
		o(e)
	}
	return e, nil
}

// Target is a watch with what is computed once about its chart.
type Target struct {
	Watch       watches.Watch
	ChartDigest string
}

// NewTarget computes a watch's chart digest. The images setting is part
// of it: relocating a watch's images upgrades its releases.
func NewTarget(w watches.Watch) Target {
	d := values.ChartDigest(w.Chart)
	if c := w.Images; c != nil {
		d += fmt.Sprintf("+images(%s,%s)", c.Registry, strings.Join(c.PullSecrets, ","))
	}
	return Target{Watch: w, ChartDigest: d}
}

// releaseKey names a release in the engine's in-memory maps.
func releaseKey(ref watches.ReleaseRef) string { return ref.Namespace + "/" + ref.Name }

// Forget drops everything remembered about a release: after its
// deletion, or once its resource is gone otherwise (its finalizer removed
// by hand, relabelled to another shard). Memory, not state: a release
// stepped again is read anew.
func (e *Engine) Forget(ref watches.ReleaseRef) {
	k := releaseKey(ref)
	e.expect.forget(k)
	e.rendered.forget(ref)
	e.manifests.forget(k)
	e.drift.baseline.forget(k)
	e.ready.forget(k)
	e.podChecks.forget(k)
	e.proofs.forget(k)
	e.forged.forget(k)
	e.unsigned.forget(k)
	e.descriptions.forget(k)
}

// event records an Event about obj, with one of the declared reasons. A
// message longer than an Event may hold is shortened (the API server would
// reject it, and the Event would be lost); conditions keep it whole.
func (e *Engine) event(obj client.Object, warning bool, reason api.Reason, format string, args ...any) {
	typ := "Normal"
	if warning {
		typ = "Warning"
	}
	note := shorten(fmt.Sprintf(format, args...), maxEventNote, eventShortened)
	e.recorder.Eventf(obj, nil, typ, string(reason), "Reconcile", "%s", note)
}

// eventf records an Event about the step's resource; like every message the
// step writes (conditions, status.history), it goes out with the values the
// chart's schema marks secret, and those read from Secrets, redacted.
func (s *step) eventf(warning bool, reason api.Reason, format string, args ...any) {
	s.e.event(s.obj, warning, reason, "%s", s.d.redact.Redact(fmt.Sprintf(format, args...)))
}

type noRecorder struct{}

func (noRecorder) Eventf(runtime.Object, runtime.Object, string, string, string, string, ...any) {}
