package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// testDeletionEndsWhenTheObjectsAreGone: with uninstall.wait (the
// default), a deleted resource goes in the reconcile that uninstalls its
// release when the API server answered each released object's DELETE with
// the object gone; when one only was marked for deletion (a finalizer of
// another controller), the resource waits for it as before.
func (e *env) testDeletionEndsWhenTheObjectsAreGone(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{})
	f.start(t)
	r := f.reconciler(e.cl)
	ctx := context.Background()

	t.Run("gone at once", func(t *testing.T) {
		const name = "goes-at-once"
		f.create(t, f.note(name, nil, api.Finalizer))
		f.settle(t, r, name)
		if err := e.cl.Delete(ctx, f.mustGet(t, name)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, f.request(name)); err != nil {
			t.Fatal(err)
		}
		if _, err := f.get(ctx, name); !apierrors.IsNotFound(err) {
			u, _ := f.get(ctx, name)
			t.Fatalf("after the reconcile that uninstalled its release the resource is still there (%v), finalizers %v: its released ConfigMap was answered gone",
				err, u.GetFinalizers())
		}
		if ok, err := f.released(ctx, name); ok || err != nil {
			t.Errorf("the released ConfigMap remains (%v)", err)
		}
	})

	t.Run("held by a finalizer", func(t *testing.T) {
		const name = "held"
		const hold = "example.com/hold"
		f.create(t, f.note(name, nil, api.Finalizer))
		f.settle(t, r, name)
		key := types.NamespacedName{Namespace: f.ns, Name: name}
		cm := &corev1.ConfigMap{}
		if err := e.cl.Get(ctx, key, cm); err != nil {
			t.Fatal(err)
		}
		cm.Finalizers = append(cm.Finalizers, hold)
		if err := e.cl.Update(ctx, cm); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { letGo(ctx, e.cl, key) })
		if err := e.cl.Delete(ctx, f.mustGet(t, name)); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, f.request(name)); err != nil {
			t.Fatal(err)
		}
		if err := f.hasFinalizers(ctx, name, []string{api.Finalizer}); err != nil {
			t.Fatalf("the resource did not wait for its ConfigMap, still being deleted: %v", err)
		}
		letGo(ctx, e.cl, key)
		testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
			if _, err := r.Reconcile(ctx, f.request(name)); err != nil {
				return err
			}
			if _, err := f.get(ctx, name); !apierrors.IsNotFound(err) {
				return fmt.Errorf("%s still there (%v)", name, err)
			}
			return nil
		})
	})
}

// letGo removes every finalizer of a ConfigMap.
func letGo(ctx context.Context, cl client.Client, key types.NamespacedName) {
	cm := &corev1.ConfigMap{}
	if err := cl.Get(ctx, key, cm); err != nil {
		return
	}
	cm.Finalizers = nil
	_ = cl.Update(ctx, cm)
}
