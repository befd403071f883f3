package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// The soak's kind.
var (
	gvk = schema.GroupVersionKind{Group: "soak.chartkeeper.dev", Version: "v1", Kind: "Soak"}
	gvr = schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: manifests.Plural(gvk.Kind)}
)

// slot is one custom resource: live or deleted, and the message of the
// last spec written to it.
type slot struct {
	key     types.NamespacedName
	live    bool
	message string
}

// workload is the only writer of the custom resources.
type workload struct {
	crs kubeops.CustomResources
	// maxDeleted bounds the resources deleted at once: deletes wait for
	// re-creates, so the live count stays near the total.
	maxDeleted int

	mu    sync.Mutex
	slots []*slot
	gen   int
	// done counts successful writes by kind; failed the writes the API
	// server refused (each is retried by a later change).
	done   map[string]int
	failed int
}

func newWorkload(dyn dynamic.Interface, namespaces []string, n int) *workload {
	w := &workload{crs: kubeops.CustomResources{Dynamic: dyn, GVR: gvr, GVK: gvk}, done: map[string]int{}, maxDeleted: max(1, n/20)}
	for i := range n {
		ns := namespaces[i%len(namespaces)]
		w.slots = append(w.slots, &slot{key: types.NamespacedName{Namespace: ns, Name: fmt.Sprintf("s%04d", i)}})
	}
	return w
}

// next returns a message never used before.
func (w *workload) next() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gen++
	return fmt.Sprintf("m%d", w.gen)
}

func spec(message string) map[string]any {
	return map[string]any{"replicas": int64(1), "message": message}
}

func (w *workload) create(ctx context.Context, s *slot) error {
	m := w.next()
	err := w.crs.Create(ctx, s.key, spec(m))
	return w.record("create", err, func() { s.live, s.message = true, m })
}

func (w *workload) update(ctx context.Context, s *slot) error {
	m := w.next()
	err := w.crs.PatchSpec(ctx, s.key, spec(m))
	return w.record("update", err, func() { s.message = m })
}

func (w *workload) remove(ctx context.Context, s *slot) error {
	err := w.crs.Delete(ctx, s.key)
	return w.record("delete", err, func() { s.live = false })
}

func (w *workload) record(kind string, err error, apply func()) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.failed++
		return fmt.Errorf("%s: %w", kind, err)
	}
	apply()
	w.done[kind]++
	return nil
}

// ensure makes sure the slot's custom resource exists, creating it once
// any earlier one is gone, and takes what the API server holds as the
// truth: a write whose answer was lost (a client timeout) may have been
// applied. It retries through API errors until ctx ends or 2 minutes pass.
func (w *workload) ensure(ctx context.Context, s *slot) error {
	return kubeops.WaitFor(ctx, 2*time.Minute, s.key.String()+" created", func(ctx context.Context) (bool, error) {
		u, err := w.crs.Namespace(s.key.Namespace).Get(ctx, s.key.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return w.create(ctx, s) == nil, nil
		case err != nil || u.GetDeletionTimestamp() != nil:
			return false, nil
		}
		m, _, _ := unstructured.NestedString(u.Object, "spec", "message")
		w.mu.Lock()
		s.live, s.message = true, m
		w.mu.Unlock()
		return true, nil
	})
}

// pick returns a random live (or deleted) slot, nil if none, and how many
// slots are deleted.
func (w *workload) pick(r *rand.Rand, live bool) (*slot, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var c []*slot
	deleted := 0
	for _, s := range w.slots {
		if !s.live {
			deleted++
		}
		if s.live == live {
			c = append(c, s)
		}
	}
	if len(c) == 0 {
		return nil, deleted
	}
	return c[r.IntN(len(c))], deleted
}

// change makes one change: 8 in 10 a new spec, 1 a delete (while fewer
// than maxDeleted are deleted), 1 a re-create of a deleted resource that
// is gone. A change that cannot be made is a new spec instead.
func (w *workload) change(ctx context.Context, r *rand.Rand) error {
	switch r.IntN(10) {
	case 8:
		if s, deleted := w.pick(r, true); s != nil && deleted < w.maxDeleted {
			return w.remove(ctx, s)
		}
	case 9:
		if s, _ := w.pick(r, false); s != nil && w.crs.Gone(ctx, s.key) {
			return w.create(ctx, s)
		}
	}
	if s, _ := w.pick(r, true); s != nil {
		return w.update(ctx, s)
	}
	return nil
}

// churn makes rate changes per second until ctx ends. A change that takes
// longer than its turn delays the next ones (time.Ticker drops ticks).
func (w *workload) churn(ctx context.Context, r *rand.Rand, rate float64) {
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_ = w.change(cctx, r) // counted in failed
			cancel()
		}
	}
}

// counts returns the writes made so far (all kinds) and the failed ones.
func (w *workload) counts() (done map[string]int, failed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[string]int, len(w.done))
	for k, v := range w.done {
		out[k] = v
	}
	return out, w.failed
}

func (w *workload) total() int {
	d, _ := w.counts()
	n := 0
	for _, v := range d {
		n += v
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
