package controller

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/api/meta"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// rolloutChartFiles is a chart whose Deployment never becomes ready on the
// test API server (no controller rolls it out): its release waits, and
// what the wait says changes as the test edits the Deployment's status.
var rolloutChartFiles = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: rollout\nversion: 1.0.0\n",
	"values.yaml": "greeting: hello\n",
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
      annotations: {greeting: {{ .Values.greeting | quote }}}
    spec:
      containers:
        - name: app
          image: registry.k8s.io/pause:3.10
`,
}

// testRewordingsShareABudget: with many releases waiting at once, the
// rewordings of their statuses (a new message, the same state) share the
// controller's budget: past it, each waits for a turn of its own, in
// order, instead of all being written at once; a change of state is
// never held for a turn, and gives its turn back.
func (e *env) testRewordingsShareABudget(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{chart: "rolloutchart"})
	f.start(t)
	cl := e.statusCounter(t)
	clk := clocktesting.NewFakePassiveClock(time.Now())
	r := f.reconciler(cl)
	r.clock = clk
	r.statuses = newStatusBook(clk)
	r.statuses.turns = rate.NewLimiter(rate.Every(10*time.Second), 1) // a turn every 10 s, none saved up
	names := []string{"wait-a", "wait-b", "wait-c"}
	for _, n := range names {
		f.create(t, f.note(n, nil))
	}
	// The installs: each writes its status at once (a change).
	for _, n := range names {
		if got := cl.reconcile(t, r, f.request(n)); got != 1 {
			t.Fatalf("%s: the install's reconcile patched the status %d times, want 1", n, got)
		}
	}
	// Past the debounce, each would reword "Install done; waiting for the
	// result" into what it waits for: only the first has a turn now; the
	// others are held, each until a later turn.
	clk.SetTime(clk.Now().Add(statusDebounce + time.Second))
	var waits []time.Duration
	for i, n := range names {
		cl.patches.Store(0)
		res, err := r.Reconcile(context.Background(), f.request(n))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		want := int32(0)
		if i == 0 {
			want = 1
		}
		if got := cl.patches.Load(); got != want {
			t.Fatalf("%s: rewording %d patched the status %d times, want %d (a turn every 10 s)", n, i+1, got, want)
		}
		// The turn booked for it; the step comes back no later (sooner
		// when the Pods of its workloads are due to be read again).
		wait := r.statuses.turn(f.mustGet(t, n).GetUID())
		if i > 0 && (res.RequeueAfter <= 0 || res.RequeueAfter > wait) {
			t.Fatalf("%s: requeued after %v, want by its turn in %v", n, res.RequeueAfter, wait)
		}
		waits = append(waits, wait)
	}
	if waits[1] <= 0 || waits[2] <= waits[1] {
		t.Fatalf("held rewordings have turns in %v and %v: want each a later turn", waits[1], waits[2])
	}
	// Asked again before its turn, a held rewording keeps its turn (not a
	// new one, later still).
	cl.patches.Store(0)
	res, err := r.Reconcile(context.Background(), f.request(names[1]))
	if err != nil {
		t.Fatal(err)
	}
	if turn := r.statuses.turn(f.mustGet(t, names[1]).GetUID()); cl.patches.Load() != 0 || turn != waits[1] || res.RequeueAfter > turn {
		t.Fatalf("wait-b asked again: %d patches, its turn in %v, requeue after %v; want none, the same turn %v", cl.patches.Load(), turn, res.RequeueAfter, waits[1])
	}
	// A change of state is written at once, whatever the budget: a spec
	// change (an upgrade).
	u := f.mustGet(t, names[2])
	u.Object["spec"] = map[string]any{"greeting": "changed"}
	if err := e.cl.Update(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	if got := cl.reconcile(t, r, f.request(names[2])); got != 1 {
		t.Fatalf("wait-c upgraded: patched the status %d times, want 1 (a change is not held)", got)
	}
	// At its turn, wait-b's rewording is written.
	clk.SetTime(clk.Now().Add(waits[1]))
	if got := cl.reconcile(t, r, f.request(names[1])); got != 1 {
		t.Fatalf("wait-b at its turn: patched the status %d times, want 1", got)
	}
	st, err := api.StatusOf(f.mustGet(t, names[1]))
	if err != nil {
		t.Fatal(err)
	}
	if c := meta.FindStatusCondition(st.Conditions, api.ConditionReady); c == nil || c.Status != "False" || c.Message == "Install done; waiting for the result" {
		t.Fatalf("wait-b's Ready condition after its turn: %+v, want the rewording written", c)
	}
}
