package release

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// These tests run Engine.Step for real - observe, Decide, the actions over
// the Helm SDK, the status bookkeeping - with Helm's in-memory storage
// driver and a fake kube client, and walk every state and transition.

// failingKube fails the creation of objects built from a manifest that
// holds "fail-me": the test chart's pre-install/pre-upgrade hook carries
// the values, so those values make installs and upgrades fail after Helm
// stored the revision, as a rejected object does in a real cluster.
type failingKube struct {
	kubefake.PrintingKubeClient
	failNext bool
	// failUpdates fails that many of the next updates (an upgrade's or a
	// rollback's apply) as the API server refuses an object.
	failUpdates int
}

func (f *failingKube) Update(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	if f.failUpdates > 0 {
		f.failUpdates--
		return &kube.Result{}, errors.New(`cannot patch "app" with kind PodDisruptionBudget: PodDisruptionBudget.policy "app" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update`)
	}
	return f.PrintingKubeClient.Update(original, target, force)
}

func (f *failingKube) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	b, _ := io.ReadAll(r)
	f.failNext = strings.Contains(string(b), "fail-me")
	return f.PrintingKubeClient.Build(strings.NewReader(string(b)), validate)
}

func (f *failingKube) Create(rl kube.ResourceList) (*kube.Result, error) {
	if f.failNext {
		return &kube.Result{}, errors.New(`admission webhook "policy.example" denied the request: data "fail-me" is not allowed`)
	}
	return f.PrintingKubeClient.Create(rl)
}

// storageClient serves what the engine reads from the cluster out of the
// memory storage: release Secrets' metadata, and every released object as
// existing (UID "uid-<name>", resourceVersion "1"). Any other call fails the test (it would be a real API call).
type storageClient struct {
	client.Client // nil: unexpected calls panic
	store         *storage.Storage
	// writes records Apply and Delete calls ("apply Kind name"); writeErr
	// fails them.
	writes   []string
	writeErr error
	// missing names objects that do not exist; leftovers are listed for
	// their kinds (released objects).
	missing   map[string]bool
	leftovers []metav1.PartialObjectMetadata
	// modifiedAt is the modifiedAt label (Unix seconds) of revisions, by
	// version, as Helm's Secret driver sets it on every update.
	modifiedAt map[int]time.Time
	// owners are the UIDs the ownerReferences of revisions' Secrets name,
	// by version (a predecessor operator's: takeover_test.go).
	owners map[int][]types.UID
}

func (s *storageClient) Apply(_ context.Context, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
	if s.writeErr != nil {
		return s.writeErr
	}
	u, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	name := fmt.Sprint(u["metadata"].(map[string]any)["name"])
	s.writes = append(s.writes, fmt.Sprintf("apply %v %s", u["kind"], name))
	delete(s.missing, name)
	return nil
}

func (s *storageClient) Delete(_ context.Context, obj client.Object, _ ...client.DeleteOption) error {
	if s.writeErr != nil {
		return s.writeErr
	}
	s.writes = append(s.writes, fmt.Sprintf("delete %s %s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName()))
	return nil
}

func (s *storageClient) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	lo := &client.ListOptions{}
	lo.ApplyOptions(opts)
	pl, ok := list.(*metav1.PartialObjectMetadataList)
	if !ok {
		return fmt.Errorf("unexpected list %T", list)
	}
	if kind := pl.GetObjectKind().GroupVersionKind().Kind; kind != "SecretList" {
		pl.Items = nil
		for _, l := range s.leftovers {
			if l.Kind+"List" == kind {
				pl.Items = append(pl.Items, l)
			}
		}
		return nil
	}
	name, _ := lo.LabelSelector.RequiresExactMatch("name")
	hist, err := s.store.History(name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return err
	}
	pl.Items = nil
	for _, r := range hist {
		labels := map[string]string{"owner": "helm", "name": r.Name, "version": strconv.Itoa(r.Version), "status": r.Info.Status.String()}
		for k, v := range r.Labels {
			labels[k] = v
		}
		if at, ok := s.modifiedAt[r.Version]; ok {
			labels["modifiedAt"] = strconv.FormatInt(at.Unix(), 10)
		}
		var refs []metav1.OwnerReference
		for _, uid := range s.owners[r.Version] {
			refs = append(refs, metav1.OwnerReference{APIVersion: "test.chartkeeper.dev/v1", Kind: "App", Name: "app", UID: uid})
		}
		pl.Items = append(pl.Items, metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", r.Name, r.Version), Labels: labels, OwnerReferences: refs}})
	}
	return nil
}

func (s *storageClient) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok && !s.missing[key.Name] {
		m.SetName(key.Name)
		m.SetNamespace(key.Namespace)
		m.SetUID(types.UID("uid-" + key.Name))
		m.SetResourceVersion("1")
		return nil
	}
	return apierrors.NewNotFound(schema.GroupResource{}, key.Name)
}

type machine struct {
	t      *testing.T
	engine *Engine
	store  *storage.Storage
	sc     *storageClient
	helm   *faultyHelm
	kube   *failingKube
	events *recorder
	clock  *clocktesting.FakeClock
	target Target
	obj    *unstructured.Unstructured
	st     api.Status
}

func testChart() *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"},
		Values:   map[string]any{"data": "v1"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  data: {{ .Values.data | quote }}\n" +
				"{{ if .Values.deploy }}---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n{{ end }}")},
			{Name: "templates/hook.yaml", Data: []byte(
				"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-hook\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade\ndata:\n  data: {{ .Values.data | quote }}\n")},
			// The chart's test: "fail-me" in .Values.test makes its creation fail.
			{Name: "templates/tests/test.yaml", Data: []byte(
				"apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Release.Name }}-test\n  annotations:\n    helm.sh/hook: test\n    expect: {{ .Values.test | default \"ok\" | quote }}\n")}},
	}
}

func newMachine(t *testing.T, mod func(*watches.Policy), opts ...Option) *machine {
	t.Helper()
	store := storage.Init(driver.NewMemory())
	kc := &failingKube{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}}
	hc := &faultyHelm{Helm: helm.NewOffline(store, kc)}
	sc := &storageClient{store: store}
	clk := clocktesting.NewFakeClock(t0)
	rec := &recorder{}
	e, err := NewEngine(hc, sc, sc, append([]Option{WithClock(clk), WithRecorder(rec), WithJitter(func(d time.Duration) time.Duration { return d })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	p := defaultPolicy()
	p.MaxHistory = 4
	if mod != nil {
		mod(&p)
	}
	w := watches.Watch{Group: "test.chartkeeper.dev", Version: "v1", Kind: "App", Chart: testChart(), Policy: p}
	obj := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"data": "v1"}}}
	obj.SetGroupVersionKind(w.GroupVersionKind())
	obj.SetNamespace("ns")
	obj.SetName("app")
	obj.SetUID("uid-app")
	obj.SetGeneration(1)
	return &machine{t: t, engine: e, store: store, sc: sc, helm: hc, kube: kc, events: rec, clock: clk, target: NewTarget(w), obj: obj}
}

// step runs one Step and returns "State/Action".
func (m *machine) step() string {
	m.t.Helper()
	s, err := m.try()
	if err != nil {
		m.t.Fatalf("step: %v", err)
	}
	return s
}

// try runs one Step and returns "State/Action" ("!" when the action
// failed) and the step's error; the reasons written must be declared.
func (m *machine) try() (string, error) {
	m.t.Helper()
	res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
	m.checkReasons()
	s := string(res.Decision.State)
	if res.Ran != ActionNone {
		s += "/" + string(res.Ran)
		if res.ActionErr != nil {
			s += "!"
		}
	}
	return s, err
}

// run steps until nothing more happens (or max steps) and returns the trace.
func (m *machine) run(max int) []string {
	var trace []string
	for range max {
		s := m.step()
		trace = append(trace, s)
		if !strings.Contains(s, "/") {
			break
		}
	}
	return trace
}

func (m *machine) setSpec(data string) { m.setValues(map[string]any{"data": data}) }

func (m *machine) setValues(spec map[string]any) {
	m.obj.Object["spec"] = spec
	m.obj.SetGeneration(m.obj.GetGeneration() + 1)
}

func (m *machine) cond(typ string) metav1.Condition {
	if c := meta.FindStatusCondition(m.st.Conditions, typ); c != nil {
		return *c
	}
	return metav1.Condition{}
}

func (m *machine) history() []string {
	hist, _ := m.store.History("app")
	out := make([]string, len(hist))
	for i, r := range hist {
		out[i] = fmt.Sprintf("%d:%s", r.Version, r.Info.Status)
	}
	sortStrings(out)
	return out
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && versionOf(s[j]) < versionOf(s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func versionOf(s string) int { v, _ := strconv.Atoi(strings.SplitN(s, ":", 2)[0]); return v }

func expectTrace(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("trace\n got: %v\nwant: %v", got, want)
	}
}

func TestMachineInstallUpgradeInSync(t *testing.T) {
	m := newMachine(t, nil)
	expectTrace(t, m.run(5), "Absent/Install", "InSync")
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v", c)
	}
	m.setSpec("v2")
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
	if m.st.ObservedGeneration != 2 || m.st.Release.Revision != 2 || m.st.Release.LastAction != "Upgrade" {
		t.Errorf("status %+v release %+v", m.st, m.st.Release)
	}
	// The steady state acts no more, however often it is stepped.
	expectTrace(t, m.run(3), "InSync")
	if got := m.history(); strings.Join(got, " ") != "1:superseded 2:deployed" {
		t.Errorf("history %v", got)
	}
}

func TestMachineFailedUpgradeRollsBackThenStalls(t *testing.T) {
	m := newMachine(t, nil) // retries: 2, backoff 10s doubling
	m.run(5)
	m.setSpec("fail-me")
	m.rolledBackUntilStalled("OutOfSync/Upgrade!", "Failed/Rollback")
	// A new spec resets the count and goes through.
	m.setSpec("v3")
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
	if m.st.Failures != 0 || m.cond(api.ConditionRemediated).Status != "" {
		t.Errorf("after a good upgrade: failures %d, Remediated %+v", m.st.Failures, m.cond(api.ConditionRemediated))
	}
}

// rolledBackUntilStalled steps a machine (retries: 2, backoff 10s
// doubling) whose desired spec keeps failing: each attempt is traced as
// attempt, is rolled back (Remediated) and waits out its backoff (Ready
// Backoff), and the third stalls with its retries spent, for good; the
// history stays within maxHistory, the latest revision deployed.
func (m *machine) rolledBackUntilStalled(attempt ...string) {
	t := m.t
	t.Helper()
	for i, wait := range []time.Duration{0, 10 * time.Second, 20 * time.Second} {
		m.clock.Step(wait)
		then := "OutOfSync"
		if i == 2 {
			then = "Stalled"
		}
		expectTrace(t, m.run(5), append(append([]string(nil), attempt...), then)...)
		if i > 0 {
			continue
		}
		if c := m.cond(api.ConditionRemediated); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRollbackSucceeded) {
			t.Errorf("Remediated %+v", c)
		}
		if c := m.cond(api.ConditionReady); c.Reason != string(api.ReasonBackoff) {
			t.Errorf("Ready while backing off: %+v", c)
		}
	}
	m.clock.Step(time.Hour)
	expectTrace(t, m.run(5), "Stalled") // no loop, however long it waits
	if m.st.Failures != 3 || m.cond(api.ConditionStalled).Reason != string(api.ReasonRetriesExhausted) {
		t.Errorf("failures %d, Stalled %+v", m.st.Failures, m.cond(api.ConditionStalled))
	}
	if h := m.history(); len(h) > 4 || !strings.HasSuffix(h[len(h)-1], ":deployed") {
		t.Errorf("history %v: want at most maxHistory 4, the latest deployed", h)
	}
}

func TestMachineFailedUpgradeUninstallStrategy(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) { p.UpgradeStrategy = watches.StrategyUninstall })
	m.run(5)
	m.setSpec("fail-me")
	expectTrace(t, m.run(5), "OutOfSync/Upgrade!", "Failed/Uninstall", "Absent")
	if len(m.history()) != 0 {
		t.Errorf("history after uninstall: %v", m.history())
	}
}

func TestMachineFailedInstallIsUninstalledAndRetried(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) { p.Retries = 1 })
	m.setSpec("fail-me")
	expectTrace(t, m.run(5), "Absent/Install!", "Failed/Uninstall", "Absent")
	m.clock.Step(10 * time.Second)
	expectTrace(t, m.run(5), "Absent/Install!", "Failed/Uninstall", "Stalled")
	if c := m.cond(api.ConditionReleased); c.Status != metav1.ConditionFalse {
		t.Errorf("Released %+v", c)
	}
}

func TestMachineKeepFailedInstall(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) { p.KeepFailedInstall = true })
	m.setSpec("fail-me")
	expectTrace(t, m.run(5), "Absent/Install!", "Stalled")
	if h := m.history(); len(h) != 1 || h[0] != "1:failed" {
		t.Errorf("history %v: want the failed install kept", h)
	}
	m.setSpec("v2")
	expectTrace(t, m.run(5), "Failed/Uninstall", "Absent/Install", "InSync")
}

func TestMachineUnlocksInterruptedOperations(t *testing.T) {
	for _, pending := range []helmrelease.Status{helmrelease.StatusPendingInstall, helmrelease.StatusPendingUpgrade, helmrelease.StatusPendingRollback} {
		t.Run(string(pending), func(t *testing.T) {
			m := newMachine(t, nil)
			m.run(5)
			if pending != helmrelease.StatusPendingInstall {
				m.setSpec("v2")
				m.run(5)
			}
			// What a killed operator leaves: the latest revision pending.
			rel, err := m.store.Last("app")
			if err != nil {
				t.Fatal(err)
			}
			rel.Info.Status = pending
			if pending == helmrelease.StatusPendingRollback {
				// What the storage stamps on a revision a rollback made.
				rel.Labels[helm.LabelMadeBy] = string(helm.MadeByRollback)
			}
			if err := m.store.Update(rel); err != nil {
				t.Fatal(err)
			}
			trace := m.run(6)
			want := map[helmrelease.Status][]string{
				helmrelease.StatusPendingInstall:  {"Locked/Unlock", "Failed/Uninstall", "Absent/Install", "InSync"},
				helmrelease.StatusPendingUpgrade:  {"Locked/Unlock", "Failed/Rollback", "OutOfSync/Upgrade", "InSync"},
				helmrelease.StatusPendingRollback: {"Locked/Unlock", "Failed/Upgrade", "InSync"},
			}[pending]
			expectTrace(t, trace, want...)
		})
	}
}
