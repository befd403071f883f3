package recorder

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
)

// sink records what was created and answers with errs in turn.
type sink struct {
	mu      sync.Mutex
	created []*eventsv1.Event
	tries   int
	errs    []error
	got     chan struct{}
	dropped atomic.Int64 // Events the recorder dropped (New's dropped)
}

func (s *sink) drop() { s.dropped.Add(1) }

func newSink(errs ...error) *sink { return &sink{errs: errs, got: make(chan struct{}, 100)} }

func (s *sink) create(_ context.Context, ev *eventsv1.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tries++
	var err error
	if len(s.errs) > 0 {
		err, s.errs = s.errs[0], s.errs[1:]
	}
	if err == nil {
		s.created = append(s.created, ev)
	}
	s.got <- struct{}{}
	return err
}

func (s *sink) counts() (tries, created int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tries, len(s.created)
}

func webapp(ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps.chartkeeper.dev", Version: "v1", Kind: "WebApp"})
	u.SetNamespace(ns)
	u.SetName("shop")
	u.SetUID("u-1")
	u.SetResourceVersion("42")
	return u
}

func newRecorder(s *sink) *Recorder {
	r := New(scheme.Scheme, "chartkeeper", s.create, s.drop, logr.Discard())
	r.clock = clocktesting.NewFakePassiveClock(time.Unix(1700000000, 5))
	r.instance = "chartkeeper-host"
	return r
}

func TestEventIsTheOneClientGoMakes(t *testing.T) {
	r := newRecorder(newSink())
	for _, tc := range []struct {
		name, ns, wantNS, note, wantNote string
	}{
		{name: "namespaced", ns: "shop", wantNS: "shop", note: "Upgraded to revision 2", wantNote: "Upgraded to revision 2"},
		{name: "cluster-scoped goes to default", ns: "", wantNS: "default", note: "Installed", wantNote: "Installed"},
		{name: "a long note is cut to what an Event holds", ns: "shop", wantNS: "shop", note: strings.Repeat("x", 2000), wantNote: strings.Repeat("x", 1024)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := r.event(webapp(tc.ns), nil, corev1.EventTypeWarning, "UpgradeFailed", "Reconcile", tc.note)
			if err != nil {
				t.Fatal(err)
			}
			want := eventsv1.Event{
				Type: "Warning", Reason: "UpgradeFailed", Action: "Reconcile", Note: tc.wantNote,
				ReportingController: "chartkeeper", ReportingInstance: "chartkeeper-host",
				Regarding: corev1.ObjectReference{Kind: "WebApp", APIVersion: "apps.chartkeeper.dev/v1", Namespace: tc.ns, Name: "shop", UID: "u-1", ResourceVersion: "42"},
			}
			if ev.Namespace != tc.wantNS || ev.Name != "shop.17979cfe362a0005" {
				t.Errorf("event %s/%s, want %s/shop.17979cfe362a0005", ev.Namespace, ev.Name, tc.wantNS)
			}
			if ev.EventTime.UnixNano() != 1700000000000000005 {
				t.Errorf("event time %v", ev.EventTime)
			}
			if ev.Type != want.Type || ev.Reason != want.Reason || ev.Action != want.Action || ev.Note != want.Note ||
				ev.ReportingController != want.ReportingController || ev.ReportingInstance != want.ReportingInstance ||
				ev.Regarding != want.Regarding || ev.Related != nil || ev.Series != nil {
				t.Errorf("event %+v, want %+v", ev, want)
			}
		})
	}
	if _, err := r.event(webapp("shop"), nil, "Odd", "X", "Reconcile", "n"); err == nil {
		t.Error("an event type other than Normal or Warning was taken")
	}
}

func TestEachEventIsLoggedAtDebugLevel(t *testing.T) {
	var lines []string
	r := newRecorder(newSink())
	r.log = funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	r.Eventf(webapp("shop"), nil, corev1.EventTypeWarning, "UpgradeFailed", "Reconcile", "upgrade of %s failed", "shop")
	if len(lines) != 1 || !strings.Contains(lines[0], `"note"="upgrade of shop failed"`) || !strings.Contains(lines[0], `"reason"="UpgradeFailed"`) ||
		!strings.Contains(lines[0], `"object"={"name"="shop" "namespace"="shop"}`) {
		t.Errorf("logged %q", lines)
	}
}

func TestSendRetriesWhatMayPassAndNotWhatWasRefused(t *testing.T) {
	RetryAfter = time.Millisecond
	t.Cleanup(func() { RetryAfter = 10 * time.Second })
	unavailable := apierrors.NewServiceUnavailable("busy")
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "events.k8s.io", Resource: "events"}, "x", errors.New("namespace terminating"))
	for _, tc := range []struct {
		name                string
		errs                []error
		wantTries, wantMade int
	}{
		{name: "created", wantTries: 1, wantMade: 1},
		{name: "unavailable, then created", errs: []error{unavailable, errors.New("connection refused")}, wantTries: 3, wantMade: 1},
		{name: "refused: not tried again", errs: []error{forbidden}, wantTries: 1},
		{name: "unavailable every time: MaxTries", errs: repeat(unavailable, MaxTries+5), wantTries: MaxTries},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSink(tc.errs...)
			r := newRecorder(s)
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan error)
			go func() { stopped <- r.Start(ctx) }()
			r.Eventf(webapp("shop"), nil, corev1.EventTypeNormal, "UpgradeSucceeded", "Reconcile", "Upgraded to revision %d", 2)
			for range tc.wantTries {
				select {
				case <-s.got:
				case <-time.After(10 * time.Second):
					t.Fatal("no try in 10s")
				}
			}
			select { // and no more
			case <-s.got:
				t.Error("tried more than", tc.wantTries, "times")
			case <-time.After(50 * time.Millisecond):
			}
			cancel()
			if err := <-stopped; err != nil {
				t.Fatal(err)
			}
			if tries, made := s.counts(); tries != tc.wantTries || made != tc.wantMade {
				t.Errorf("tries %d, created %d; want %d, %d", tries, made, tc.wantTries, tc.wantMade)
			}
		})
	}
}

func repeat(err error, n int) []error {
	out := make([]error, n)
	for i := range out {
		out[i] = err
	}
	return out
}

func TestAFullQueueDropsAndStopSendsWhatIsQueued(t *testing.T) {
	s := newSink()
	s.got = make(chan struct{}, MaxQueued+10)
	r := newRecorder(s)
	for range MaxQueued + 3 { // not started: nothing is sent yet
		r.Eventf(webapp("shop"), nil, corev1.EventTypeNormal, "InstallSucceeded", "Reconcile", "Installed")
	}
	if got := s.dropped.Load(); got != 3 {
		t.Errorf("dropped %v, want 3", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // stopped at once: what is queued still goes
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if tries, made := s.counts(); tries != MaxQueued || made != MaxQueued {
		t.Errorf("tries %d, created %d; want %d", tries, made, MaxQueued)
	}
}
