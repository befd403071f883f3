package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// statusCounter is an uncached client that counts status patches and can
// serve chosen resources from a frozen copy, as a lagging cache would.
type statusCounter struct {
	client.Client
	patches atomic.Int32
	stale   sync.Map // types.NamespacedName -> *unstructured.Unstructured
}

func (e *env) statusCounter(t *testing.T) *statusCounter {
	t.Helper()
	base, err := client.NewWithWatch(e.cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &statusCounter{}
	c.Client = interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, cl client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if v, ok := c.stale.Load(key); ok {
				if u, isU := obj.(*unstructured.Unstructured); isU {
					v.(*unstructured.Unstructured).DeepCopyInto(u)
					return nil
				}
			}
			return cl.Get(ctx, key, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if sub == "status" {
				c.patches.Add(1)
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	return c
}

// reconcile sends r one request and returns the status patches it made.
func (c *statusCounter) reconcile(t *testing.T, r *Reconciler, req ctrl.Request) int32 {
	t.Helper()
	c.patches.Store(0)
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return c.patches.Load()
}

// countingFixture starts a fixture without a controller and creates the
// resource name; its Reconciler reads and writes through a statusCounter.
func (e *env) countingFixture(t *testing.T, name string) (*fixture, *statusCounter, *Reconciler) {
	t.Helper()
	f := e.newFixture(t, fixtureOptions{})
	f.start(t)
	cl := e.statusCounter(t)
	f.create(t, f.note(name, nil))
	return f, cl, f.reconciler(cl)
}

// testStatusPatches: each reconcile patches the status at most once, and
// only when it changed; once the release is ready, reconciles with nothing
// new patch nothing, and a spec change is written once.
func (e *env) testStatusPatches(t *testing.T) {
	const name = "status"
	f, cl, r := e.countingFixture(t, name)
	ctx := context.Background()
	reconcile := func(t *testing.T) int32 { t.Helper(); return cl.reconcile(t, r, f.request(name)) }

	kind := f.target.Watch.Kind
	changed := func() float64 {
		return statusWritesCounted(t, kind, string(api.ReasonProgressing), string(metrics.StatusChanged))
	}
	changed0 := changed()
	if n := reconcile(t); n != 1 {
		t.Fatalf("first reconcile (install) patched the status %d times, want 1", n)
	}
	// The write is counted: Ready False, Progressing (waiting for the
	// install's result), a change.
	if d := changed() - changed0; d < 1 {
		t.Errorf("chartkeeper_status_writes_total{kind=%q,reason=\"Progressing\",change=\"changed\"} rose by %v after the install's status write", kind, d)
	}
	// Until ready, every reconcile patches at most once, and only when
	// the status changed.
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
		before, _ := api.StatusOf(f.mustGet(t, name))
		n := reconcile(t)
		after, _ := api.StatusOf(f.mustGet(t, name))
		if changed := !sameStatus(before, after); n > 1 || (n == 1) != changed {
			t.Fatalf("reconcile patched the status %d times; status changed: %v", n, changed)
		}
		return f.ready(ctx, name)
	})

	for i := range 2 {
		if n := reconcile(t); n != 0 {
			t.Fatalf("reconcile %d with nothing new patched the status %d times, want 0", i+1, n)
		}
	}

	u := f.mustGet(t, name)
	u.Object["spec"] = map[string]any{"greeting": "changed"}
	if err := e.cl.Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	if n := reconcile(t); n != 1 {
		t.Fatalf("reconcile after a spec change (upgrade) patched the status %d times, want 1", n)
	}
}

// testStaleCacheGuard: after a status write, a reconcile that reads an
// older copy of the resource (the cache behind the write) starts from the
// status this process wrote, not from the older one.
func (e *env) testStaleCacheGuard(t *testing.T) {
	const name = "stale"
	f, cl, r := e.countingFixture(t, name)
	cl.reconcile(t, r, f.request(name))
	older := f.mustGet(t, name) // status of the install step, not yet Ready
	f.settle(t, r, name)
	current := f.mustGet(t, name)
	wrote, _ := api.StatusOf(current)
	olderSt, _ := api.StatusOf(older)
	if sameStatus(olderSt, wrote) {
		t.Fatalf("the test needs two different statuses; both are %s", statusJSON(wrote))
	}

	cl.stale.Store(types.NamespacedName{Namespace: f.ns, Name: name}, older)
	if st, _, cur, err := r.statuses.of(older); err != nil || !sameStatus(st, wrote) || !sameStatus(cur, wrote) {
		t.Errorf("statuses.of(older copy) = %s, %s (%v), want the status written last: %s", statusJSON(st), statusJSON(cur), err, statusJSON(wrote))
	}
	if n := cl.reconcile(t, r, f.request(name)); n != 0 {
		t.Errorf("reconcile over an older copy patched the status %d times, want 0 (it started from the older status)", n)
	}
	if got, _ := api.StatusOf(f.mustGet(t, name)); !sameStatus(got, wrote) {
		t.Errorf("status now %s, want it unchanged: %s", statusJSON(got), statusJSON(wrote))
	}
}

// testBookKeepsNoCopyOnceCached: once the cache shows the status written
// last, the book holds no copy of it (the cache's is the same status), a
// reconcile over it writes nothing, and a step still starts from it.
func (e *env) testBookKeepsNoCopyOnceCached(t *testing.T) {
	const name = "cached"
	f, cl, r := e.countingFixture(t, name)
	f.settle(t, r, name)
	if n := r.statuses.copies(); n == 0 {
		t.Fatalf("right after the writes the book holds no status; the test needs one")
	}
	wrote, _ := api.StatusOf(f.mustGet(t, name))
	if n := cl.reconcile(t, r, f.request(name)); n != 0 {
		t.Errorf("reconcile over the copy that holds the last write patched the status %d times, want 0", n)
	}
	if n := r.statuses.copies(); n != 0 {
		t.Errorf("the book holds %d statuses once the cache holds the last write, want 0", n)
	}
	persisted, at, current, err := r.statuses.of(f.mustGet(t, name))
	if err != nil || !sameStatus(persisted, wrote) || !sameStatus(current, wrote) || at.IsZero() {
		t.Errorf("statuses.of = %s, %s, written at %v (%v); want the status written last, with its time", statusJSON(persisted), statusJSON(current), at, err)
	}
}

// sameStatus reports whether two statuses are the same as the API server
// stores them (times to the second).
func sameStatus(a, b api.Status) bool { return statusJSON(a) == statusJSON(b) }

// statusJSON is a status as the API server stores it.
func statusJSON(st api.Status) string {
	b, err := json.Marshal(st)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// statusWritesCounted reads chartkeeper_status_writes_total for one set of
// labels from the registry the operator serves.
func statusWritesCounted(t *testing.T, kind, reason, change string) float64 {
	t.Helper()
	families, err := crmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"kind": kind, "reason": reason, "change": change}
	for _, fam := range families {
		if fam.GetName() != "chartkeeper_status_writes_total" {
			continue
		}
		for _, m := range fam.GetMetric() {
			match := 0
			for _, l := range m.GetLabel() {
				if want[l.GetName()] == l.GetValue() {
					match++
				}
			}
			if match == len(want) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// testBookLetsGoOnceCached: under the controller, once a resource is
// Ready and its last status write reached the cache, the book holds no
// copy of any status, though no reconcile follows a status write; when
// the resource is gone, the book holds nothing of it.
func (e *env) testBookLetsGoOnceCached(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{})
	r, err := setup(f.mgr, f.deps, nil, f.engine, f.target, logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	f.start(t)
	const name = "letgo"
	f.create(t, f.note(name, nil))
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error { return f.ready(ctx, name) })
	testenv.Eventually(t, waitTimeout, func(context.Context) error {
		if n := r.statuses.copies(); n != 0 {
			return fmt.Errorf("the book holds %d statuses of a Ready resource", n)
		}
		return nil
	})
	if err := e.cl.Delete(context.Background(), f.note(name, nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
		if _, err := f.get(ctx, name); !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s not gone yet (%v)", name, err)
		}
		if n := r.statuses.size(); n != 0 {
			return fmt.Errorf("the book holds %d entries after the resource is gone", n)
		}
		return nil
	})
}
