package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// testEditRightAfterRelease: a released object edited by someone else
// between the install and the first look at what it released is drift,
// and is put back. The first look must not take the edited object for
// what the install wrote (the cache already shows the edit when it
// comes: the worst case).
func (e *env) testEditRightAfterRelease(t *testing.T) {
	const name = "edited-early"
	f, cl, r := e.countingFixture(t, name)
	ctx := context.Background()
	if n := cl.reconcile(t, r, f.request(name)); n != 1 {
		t.Fatalf("first reconcile (install) patched the status %d times, want 1", n)
	}
	key := types.NamespacedName{Namespace: f.ns, Name: name}
	cm := &corev1.ConfigMap{}
	if err := e.cl.Get(ctx, key, cm); err != nil {
		t.Fatalf("the install released no ConfigMap: %v", err)
	}
	want := cm.Data["greeting"]
	cm.Data["greeting"] = "edited by hand"
	if err := e.cl.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	// Let the operator's cache catch up with the edit before it looks.
	if err := f.deps.WatchKind(corev1.SchemeGroupVersion.WithKind("ConfigMap")); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
		if err := f.deps.Get(ctx, key, m); err != nil {
			return err
		}
		if m.GetResourceVersion() != cm.GetResourceVersion() {
			return fmt.Errorf("the cache holds version %s, the edit made %s", m.GetResourceVersion(), cm.GetResourceVersion())
		}
		return nil
	})
	f.settle(t, r, name)
	got := &corev1.ConfigMap{}
	if err := e.cl.Get(ctx, key, got); err != nil {
		t.Fatal(err)
	}
	if got.Data["greeting"] != want {
		t.Errorf("after the resource settled the ConfigMap says %q, want the released %q: an edit right after the install was taken for the release", got.Data["greeting"], want)
	}
}
