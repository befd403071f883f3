package release

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// faultyHelm is a fake of the Helm interface: the real offline client,
// with an error injected into the named action ("Install", "Rollback", ...)
// before it runs (so nothing is stored).
type faultyHelm struct {
	Helm
	fail map[string]error
	// gets counts the revisions decoded (Get).
	gets int
	// lingering: an uninstall tells Guard.Deleted that its objects are
	// only marked for deletion (finalizers to run), not gone.
	lingering bool
}

func (f *faultyHelm) Get(ctx context.Context, name, ns string, version int) (*helmrelease.Release, error) {
	f.gets++
	return f.Helm.Get(ctx, name, ns, version)
}

func (f *faultyHelm) Install(ctx context.Context, r helm.Request) (*helmrelease.Release, error) {
	if err := f.fail["Install"]; err != nil {
		return nil, err
	}
	rel, err := f.Helm.Install(ctx, r)
	if err == nil {
		wroteReleased(r.Guard, rel)
	}
	return rel, err
}

func (f *faultyHelm) Upgrade(ctx context.Context, r helm.Request) (*helmrelease.Release, error) {
	if err := f.fail["Upgrade"]; err != nil {
		return nil, err
	}
	rel, err := f.Helm.Upgrade(ctx, r)
	if err == nil {
		wroteReleased(r.Guard, rel)
	}
	return rel, err
}

func (f *faultyHelm) Rollback(ctx context.Context, name, ns string, to, maxHistory int, g helm.Guard) error {
	if err := f.fail["Rollback"]; err != nil {
		return err
	}
	if err := f.Helm.Rollback(ctx, name, ns, to, maxHistory, g); err != nil {
		return err
	}
	hist, err := f.Helm.(interface {
		History(ctx context.Context, name, ns string) ([]*helmrelease.Release, error)
	}).History(ctx, name, ns)
	if err == nil && len(hist) > 0 {
		wroteReleased(g, hist[len(hist)-1])
	}
	return err
}

// wroteReleased tells g, as the real client's writes do, of each object of
// the release's manifest as storageClient serves it (UID "uid-<name>",
// resourceVersion "1").
func wroteReleased(g helm.Guard, rel *helmrelease.Release) {
	if g.Wrote == nil || rel == nil {
		return
	}
	for _, m := range manifestObjects(rel.Manifest) {
		m.SetUID(types.UID("uid-" + m.Name))
		m.SetResourceVersion("1")
		g.Wrote(&m)
	}
}

// manifestObjects is the metadata of each object of a manifest.
func manifestObjects(manifest string) []metav1.PartialObjectMetadata {
	var out []metav1.PartialObjectMetadata
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var m metav1.PartialObjectMetadata
		if err := yaml.Unmarshal([]byte(doc), &m); err == nil && m.Name != "" {
			out = append(out, m)
		}
	}
	return out
}

// Uninstall tells g.Deleted, as the real client does, of each object of
// the latest revision's manifest: gone, or only marked (lingering).
func (f *faultyHelm) Uninstall(ctx context.Context, name, ns, description string, g helm.Guard) error {
	if err := f.fail["Uninstall"]; err != nil {
		return err
	}
	last, _ := f.Helm.Get(ctx, name, ns, 0)
	if err := f.Helm.Uninstall(ctx, name, ns, description, g); err != nil || g.Deleted == nil || last == nil {
		return err
	}
	for _, m := range manifestObjects(last.Manifest) {
		if m.Namespace == "" {
			m.Namespace = ns
		}
		g.Deleted(ownership.Placement{GVK: m.GroupVersionKind(), Namespace: m.Namespace, Name: m.Name}, !f.lingering)
	}
	return nil
}

func (f *faultyHelm) Test(ctx context.Context, name, ns string, g helm.Guard) (helm.TestRun, error) {
	if err := f.fail["Test"]; err != nil {
		return helm.TestRun{}, err
	}
	return f.Helm.Test(ctx, name, ns, g)
}

func (f *faultyHelm) TakeOver(ctx context.Context, rel *helmrelease.Release, labels map[string]string) error {
	if err := f.fail["TakeOver"]; err != nil {
		return err
	}
	return f.Helm.TakeOver(ctx, rel, labels)
}

func (f *faultyHelm) Unlock(ctx context.Context, name, ns string) (*helmrelease.Release, error) {
	if err := f.fail["Unlock"]; err != nil {
		return nil, err
	}
	return f.Helm.Unlock(ctx, name, ns)
}

// recorder records Events ("Warning InstallFailed").
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Eventf(_ runtime.Object, _ runtime.Object, typ, reason, _, _ string, _ ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, typ+" "+reason)
}

// take returns the Events recorded since the last take.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// reasons returns the reasons of the Events recorded so far.
func (r *recorder) reasons() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.events))
	for i, ev := range r.events {
		_, out[i], _ = strings.Cut(ev, " ")
	}
	return out
}

// checkReasons fails the test if a condition or an Event the engine wrote
// has a reason that api does not declare: the set of reasons is closed.
func (m *machine) checkReasons() {
	m.t.Helper()
	for _, c := range m.st.Conditions {
		if strings.Contains(c.Type, "/") {
			continue // another controller's (example.com/Audited): chartkeeper writes none
		}
		if !api.IsReason(c.Reason) {
			m.t.Errorf("condition %s has the undeclared reason %q", c.Type, c.Reason)
		}
	}
	for _, r := range m.events.reasons() {
		if !api.IsReason(r) {
			m.t.Errorf("an Event has the undeclared reason %q", r)
		}
	}
}

// actionCase is one row of an action's table test: the machine is brought
// to the step under test, then that step runs (an error injected into its
// Helm call when fail is set) and what it recorded is checked.
type actionCase struct {
	name   string
	policy func(*watches.Policy)
	setup  func(m *machine)
	fail   map[string]error
	want   string            // the step's trace ("Failed/Rollback!")
	events []string          // Events of the step ("Normal RollbackSucceeded")
	conds  map[string]string // condition -> "Status Reason" ("": absent)
	// failures is the failure count after the step; lastAction
	// status.release.lastAction ("-": no status.release).
	failures   int
	lastAction string
	// stepErr: the step fails as a whole (retried as it is).
	stepErr bool
	// counted, when set, is what the step adds to the outcome counters, by
	// series (`chartkeeper_remediations_total{action="Rollback",kind="App",result="success"}`);
	// the others must not grow.
	counted map[string]float64
}

func (tc actionCase) run(m *machine) {
	t := m.t
	t.Helper()
	if tc.setup != nil {
		tc.setup(m)
	}
	m.events.take()
	m.helm.fail = tc.fail
	before := outcomeCounts(t)
	got, err := m.try()
	m.helm.fail = nil
	if tc.counted != nil {
		checkCounted(t, before, outcomeCounts(t), tc.counted)
	}
	if (err != nil) != tc.stepErr {
		t.Errorf("step error %v, want one: %v", err, tc.stepErr)
	}
	if got != tc.want {
		t.Errorf("step %s, want %s", got, tc.want)
	}
	if evs := fmt.Sprint(m.events.take()); evs != fmt.Sprint(tc.events) {
		t.Errorf("events %s, want %s", evs, tc.events)
	}
	for typ, want := range tc.conds {
		c := m.cond(typ)
		if got := string(c.Status) + " " + c.Reason; (want == "" && c.Type != "") || (want != "" && got != want) {
			t.Errorf("%s: %q (%s), want %q", typ, got, c.Message, want)
		}
	}
	if m.st.Failures != tc.failures {
		t.Errorf("failures %d, want %d (%s)", m.st.Failures, tc.failures, m.st.LastFailureMessage)
	}
	last := "-"
	if m.st.Release != nil {
		last = m.st.Release.LastAction
	}
	if tc.lastAction != "" && last != tc.lastAction {
		t.Errorf("status.release.lastAction %s, want %s", last, tc.lastAction)
	}
}

func runActionCases(t *testing.T, cases []actionCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { tc.run(newMachine(t, tc.policy)) })
	}
}
