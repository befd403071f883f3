package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// testShardSkip: a request for a resource the watch's selector does not
// select (another shard's) leaves it alone: no finalizer added or removed,
// no status, no release; a selected resource is reconciled.
func (e *env) testShardSkip(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{watch: "  selector:\n    matchLabels: {shard: a}\n"})
	f.start(t)
	r := f.reconciler(e.cl)

	tests := []struct {
		name       string
		labels     map[string]string
		finalizers []string
		deleting   bool
		selected   bool
	}{
		{name: "no labels", labels: nil},
		{name: "other shard", labels: map[string]string{"shard": "b"}},
		{name: "other shard, being deleted with chartkeeper's finalizer", labels: map[string]string{"shard": "b"},
			finalizers: []string{api.Finalizer, "example.com/keep"}, deleting: true},
		{name: "this shard", labels: map[string]string{"shard": "a"}, selected: true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			name := fmt.Sprintf("shard-%d", i)
			f.create(t, f.note(name, tc.labels, tc.finalizers...))
			if tc.deleting {
				if err := e.cl.Delete(ctx, f.mustGet(t, name)); err != nil {
					t.Fatal(err)
				}
			}
			before := f.mustGet(t, name)

			// Two requests: the second would observe the first's release.
			for range 2 {
				res, err := r.Reconcile(ctx, f.request(name))
				if err != nil {
					t.Fatalf("Reconcile: %v", err)
				}
				if !tc.selected && res != (ctrl.Result{}) {
					t.Errorf("Reconcile of an unselected resource = %+v, want no requeue", res)
				}
			}

			after := f.mustGet(t, name)
			if tc.selected {
				if !slices.Contains(after.GetFinalizers(), api.Finalizer) {
					t.Errorf("selected resource: finalizers %v lack %s", after.GetFinalizers(), api.Finalizer)
				}
				if _, ok := after.Object["status"]; !ok {
					t.Error("selected resource: no status written")
				}
				return
			}
			if !slices.Equal(after.GetFinalizers(), before.GetFinalizers()) {
				t.Errorf("finalizers %v, want them untouched: %v", after.GetFinalizers(), before.GetFinalizers())
			}
			if st, ok := after.Object["status"]; ok {
				t.Errorf("status written: %v", st)
			}
			if after.GetResourceVersion() != before.GetResourceVersion() {
				t.Errorf("resource written: resourceVersion %s, was %s", after.GetResourceVersion(), before.GetResourceVersion())
			}
			if n, err := f.releaseSecrets(ctx, name); err != nil || n != 0 {
				t.Errorf("%d release revisions (%v), want none", n, err)
			}
			if ok, err := f.released(ctx, name); ok || err != nil {
				t.Errorf("released ConfigMap exists (%v), want none", err)
			}
			if _, known := r.ownerOf(f.ns + "/" + name); known {
				t.Error("the release of an unselected resource is indexed")
			}
		})
	}
}
