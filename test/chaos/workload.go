package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// badPort is a Service port the API server rejects: an upgrade to it fails
// and is rolled back.
const badPort = 70000

// spec is what the harness asks of a release.
type spec struct {
	Replicas   int    `json:"replicas"`
	Port       int    `json:"port"`
	Data       string `json:"data"`
	ConfigMaps int    `json:"configMaps"`
	// Hook turns on the chart's hook: Helm then records the revision
	// pending before it applies anything (a kill can catch that state).
	Hook bool `json:"hook,omitempty"`
}

func (s spec) values() map[string]any {
	var m map[string]any
	b, _ := json.Marshal(s)
	_ = json.Unmarshal(b, &m)
	return m
}

// slot is one custom resource the harness plays with: it exists (live) or
// was deleted, and when it exists, spec is the last spec written to it.
type slot struct {
	key  types.NamespacedName
	kind *chaosKind
	live bool
	spec spec
	// busy: a fault is working on it; spec changes leave it alone.
	busy bool
}

// workload is the harness's model of the custom resources, and the only
// writer of them. A write whose outcome is unknown (the API server died
// mid-request) leaves the model unsure; the final specs settle it.
type workload struct {
	dyn   dynamic.Interface
	mu    sync.Mutex
	slots []*slot
	gen   int
	// changes counts spec writes that succeeded, by kind.
	changes map[string]int
	// errors counts writes the API server failed (while restarting, say).
	errors int
}

// newWorkload makes n slots, the kinds taking turns and each kind's slots
// spread over the namespaces.
func newWorkload(dyn dynamic.Interface, namespaces []string, n int, kinds []*chaosKind) *workload {
	w := &workload{dyn: dyn, changes: map[string]int{}}
	for i := range n {
		k := kinds[i%len(kinds)]
		ns := namespaces[(i/len(kinds))%len(namespaces)]
		w.slots = append(w.slots, &slot{key: types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("%s%02d", k.prefix, i)}, kind: k})
	}
	return w
}

// goodSpec returns a new valid spec, different from every earlier one.
func (w *workload) goodSpec(r *rand.Rand, maxCM int) spec {
	w.gen++
	return spec{Replicas: 1 + r.IntN(2), Port: 80 + r.IntN(2)*8000, Data: fmt.Sprintf("g%d", w.gen), ConfigMaps: r.IntN(maxCM + 1)}
}

// crs writes the custom resources of the slot's kind.
func (w *workload) crs(s *slot) kubeops.CustomResources {
	return kubeops.CustomResources{Dynamic: w.dyn, GVR: s.kind.gvr(), GVK: s.kind.gvk}
}

func (w *workload) client(s *slot) dynamic.ResourceInterface {
	return w.crs(s).Namespace(s.key.Namespace)
}

// create creates the slot's custom resource with sp.
func (w *workload) create(ctx context.Context, s *slot, sp spec) error {
	err := w.crs(s).Create(ctx, s.key, sp.values())
	return w.record("create", err, func() { s.live, s.spec = true, sp })
}

// patch replaces the slot's spec with sp.
func (w *workload) patch(ctx context.Context, s *slot, sp spec, kind string) error {
	err := w.crs(s).PatchSpec(ctx, s.key, sp)
	return w.record(kind, err, func() { s.spec = sp })
}

// remove deletes the slot's custom resource (the operator uninstalls its release).
func (w *workload) remove(ctx context.Context, s *slot) error {
	err := w.crs(s).Delete(ctx, s.key)
	return w.record("delete", err, func() { s.live = false })
}

func (w *workload) record(kind string, err error, apply func()) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errors++
		return fmt.Errorf("%s: %w", kind, err)
	}
	apply()
	w.changes[kind]++
	return nil
}

// pick returns a random slot that is (or is not) live, or nil.
func (w *workload) pick(r *rand.Rand, live bool) *slot {
	return w.pickWhere(r, func(s *slot) bool { return s.live == live })
}

// pickWhere returns a random slot that is not busy and satisfies ok, or nil.
func (w *workload) pickWhere(r *rand.Rand, ok func(*slot) bool) *slot {
	w.mu.Lock()
	defer w.mu.Unlock()
	var c []*slot
	for _, s := range w.slots {
		if !s.busy && ok(s) {
			c = append(c, s)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[r.IntN(len(c))]
}

// anyWhere reports whether some slot satisfies ok.
func (w *workload) anyWhere(ok func(*slot) bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range w.slots {
		if ok(s) {
			return true
		}
	}
	return false
}

// setBusy marks a slot as taken by a fault (or frees it).
func (w *workload) setBusy(s *slot, busy bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s.busy = busy
}

// gone reports whether the slot's custom resource is absent from the API.
func (w *workload) gone(ctx context.Context, s *slot) bool {
	return w.crs(s).Gone(ctx, s.key)
}

// change makes one random change: mostly a new valid spec, sometimes one
// whose upgrade fails (and is rolled back), a deletion or a re-creation.
func (w *workload) change(ctx context.Context, r *rand.Rand, maxCM int) error {
	switch n := r.IntN(10); {
	case n < 7:
		if s := w.pick(r, true); s != nil {
			return w.patch(ctx, s, w.next(r, maxCM), "update")
		}
	case n < 8:
		if s := w.pick(r, true); s != nil {
			bad := w.next(r, maxCM)
			bad.Port = badPort
			return w.patch(ctx, s, bad, "failing update")
		}
	case n < 9:
		if s := w.pick(r, true); s != nil && w.liveCount() > len(w.slots)/2 {
			return w.remove(ctx, s)
		}
	default:
		if s := w.pick(r, false); s != nil && w.gone(ctx, s) {
			return w.create(ctx, s, w.next(r, maxCM))
		}
	}
	return nil
}

func (w *workload) next(r *rand.Rand, maxCM int) spec {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.goodSpec(r, maxCM)
}

func (w *workload) liveCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, s := range w.slots {
		if s.live {
			n++
		}
	}
	return n
}

// snapshot copies the slots.
func (w *workload) snapshot() []slot {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]slot, len(w.slots))
	for i, s := range w.slots {
		out[i] = *s
	}
	return out
}
