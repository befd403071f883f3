package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// An object the chart marks helm.sh/resource-policy: keep outlives its
// custom resource: it gets no ownerReference (the garbage collector would
// delete it), deletion does not wait for it, and it is still there, with no
// ownerReference, once the garbage collector has acted on the resource's
// deletion (a witness the test gave the resource as owner is gone); what
// is not kept is gone.
func TestKeptObjectsSurviveTheCustomResource(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "keep", map[string]any{"keptVolume": true})); err != nil {
		t.Fatal(err)
	}
	pvcKey := types.NamespacedName{Namespace: ns, Name: "keep-data"}
	// A claim stays Pending without a storage class: the App is released, not Ready.
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "keep")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReleased); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not released: %+v", st.Conditions)
		}
		return env.Client.Get(ctx, pvcKey, &corev1.PersistentVolumeClaim{})
	})
	// kept fails the test if the claim is gone, being deleted or owned;
	// it returns the error of a read that failed otherwise.
	kept := func(ctx context.Context) error {
		t.Helper()
		pvc := &corev1.PersistentVolumeClaim{}
		if err := env.Client.Get(ctx, pvcKey, pvc); apierrors.IsNotFound(err) {
			t.Fatalf("kept claim deleted: %v", err)
		} else if err != nil {
			return err
		}
		if pvc.DeletionTimestamp != nil || len(pvc.OwnerReferences) > 0 {
			t.Fatalf("kept claim is being deleted (%v) or owned (%+v)", pvc.DeletionTimestamp, pvc.OwnerReferences)
		}
		return nil
	}
	if err := kept(ctx); err != nil {
		t.Fatal(err)
	}
	// The witness: an object of the test's own that the App owns. The
	// garbage collector deletes it once the App is gone, as it would the
	// claim if the claim had the App as owner.
	witness := gcWitness(t, env, ns, "keep")

	if err := env.Client.Delete(ctx, newApp(ns, "keep", nil)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		if err := kept(ctx); err != nil {
			return err
		}
		if _, _, err := getApp(ctx, env, ns, "keep"); !apierrors.IsNotFound(err) {
			return fmt.Errorf("App still there (err=%v)", err)
		}
		return nil
	})
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		if err := kept(ctx); err != nil {
			return err
		}
		for _, name := range []string{"keep-config", witness} {
			err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.ConfigMap{})
			if !apierrors.IsNotFound(err) {
				return fmt.Errorf("ConfigMap %s not deleted (err=%v)", name, err)
			}
		}
		return nil
	})
	// The operator let the App go (its uninstall is over) and the garbage
	// collector has acted on its deletion: the claim stays.
	if err := kept(ctx); err != nil {
		t.Fatal(err)
	}

	// The App made again takes its claim back: the install finds it (it
	// still carries the release's Helm marks) and adopts it, as Helm's
	// install does, rather than failing on it or making another.
	before := &corev1.PersistentVolumeClaim{}
	if err := env.Client.Get(ctx, pvcKey, before); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, newApp(ns, "keep", map[string]any{"keptVolume": true})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "keep")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReleased); c.Status != metav1.ConditionTrue || st.Release == nil || st.Release.Revision != 1 {
			return fmt.Errorf("not released at revision 1: %+v %+v", st.Release, st.Conditions)
		}
		return nil
	})
	after := &corev1.PersistentVolumeClaim{}
	if err := env.Client.Get(ctx, pvcKey, after); err != nil {
		t.Fatal(err)
	}
	if after.UID != before.UID || after.DeletionTimestamp != nil {
		t.Errorf("the kept claim was replaced or is being deleted: uid %s (was %s), deletion %v", after.UID, before.UID, after.DeletionTimestamp)
	}
}

// gcWitness creates a ConfigMap owned by the App name (an ownerReference to
// it, as the operator gives what it releases) and returns its name.
func gcWitness(t *testing.T, env *testenv.Env, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	app, _, err := getApp(ctx, env, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-gc-witness",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: appGVK.GroupVersion().String(), Kind: appGVK.Kind, Name: name, UID: app.GetUID()}}}}
	if err := env.Client.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	return cm.Name
}

// An install that fails with an error longer than an Event may hold
// (1,024 bytes) still records its Warning Event, shortened, while the
// condition keeps the whole message.
func TestLongFailureMessagesStillMakeEvents(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	msg := "START-OF-ERROR " + strings.Repeat("this install failed for a long reason, ", 50) + "END-OF-ERROR"
	if err := env.Client.Create(ctx, newApp(ns, "long", map[string]any{"failWith": msg})); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "long")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReleased); !strings.Contains(c.Message, "END-OF-ERROR") {
			return fmt.Errorf("Released does not hold the whole error: %+v", c)
		}
		return nil
	})
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		var evs eventsv1.EventList
		if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, ev := range evs.Items {
			if ev.Regarding.Name != "long" || ev.Type != corev1.EventTypeWarning || ev.Reason != string(api.ReasonChartError) {
				continue
			}
			if !strings.Contains(ev.Note, "START-OF-ERROR") || len(ev.Note) > 1024 {
				return fmt.Errorf("event note of %d bytes: %q", len(ev.Note), ev.Note)
			}
			return nil
		}
		return fmt.Errorf("no Warning %s event among %d events", api.ReasonChartError, len(evs.Items))
	})
}

// A spec change that drops a kept object (helm.sh/resource-policy: keep)
// from the chart leaves the object in place: Helm's upgrade keeps it, and
// chartkeeper's prune of leftovers, which looks at ConfigMaps since the
// release still holds some, does not delete it either, in any of the
// in-sync steps that follow (three, requested with
// chartkeeper.dev/reconcile-requested-at: each looks for leftovers).
func TestKeptObjectSurvivesItsRemovalFromTheChart(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "dropkeep", map[string]any{"keptConfig": true})); err != nil {
		t.Fatal(err)
	}
	key := types.NamespacedName{Namespace: ns, Name: "dropkeep-kept"}
	var uid types.UID
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "dropkeep")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReleased); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not released: %+v", st.Conditions)
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, key, cm); err != nil {
			return err
		}
		uid = cm.UID
		return nil
	})
	patchSpec(t, env, ns, "dropkeep", map[string]any{"keptConfig": false})
	waitReady(t, env, ns, "dropkeep", 2)
	// In sync at revision 2: each step looks for leftovers, and would prune
	// the ConfigMap (Event Pruned) before it records the request it
	// handled. The ConfigMap stays, the same object, step after step.
	for i := 1; i <= 3; i++ {
		st := requestReconcile(t, env, ns, "dropkeep", fmt.Sprintf("%s-%d", time.Now().UTC().Format(time.RFC3339Nano), i))
		if st.Release == nil || st.Release.Revision != 2 {
			t.Fatalf("handled at %+v, want revision 2", st.Release)
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, key, cm); err != nil {
			t.Fatalf("kept ConfigMap dropped from the chart: %v", err)
		}
		if cm.UID != uid || cm.DeletionTimestamp != nil {
			t.Fatalf("kept ConfigMap replaced (UID %s, was %s) or being deleted (%v)", cm.UID, uid, cm.DeletionTimestamp)
		}
		var evs eventsv1.EventList
		if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs.Items {
			if ev.Regarding.Name == "dropkeep" && ev.Reason == string(api.ReasonPruned) && strings.Contains(ev.Note, "dropkeep-kept") {
				t.Fatalf("kept ConfigMap pruned: %s", ev.Note)
			}
		}
	}
}
