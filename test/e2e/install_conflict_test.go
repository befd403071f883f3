package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// An install whose chart names an object that exists and is not this
// release's (no Helm marks of it: made by hand, or by another release)
// is refused as Helm refuses it, and leaves the cluster as it found it:
// the object keeps its data and gets no mark of the release, the objects
// the install had created are gone again, no revision is stored, and a
// pre-install hook has not run. Deleting the resource then leaves the
// object alone. An install creates first and reads an object only when
// the API server answers that it exists (internal/helm/createfirst.go), so
// this is the path that read takes.
func TestInstallRefusesAnObjectThatIsNotItsOwn(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	for _, hook := range []bool{false, true} {
		name := "taken"
		if hook {
			name = "taken-hook"
		}
		foreign := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-config", Labels: map[string]string{"team": "payments"}},
			Data:       map[string]string{"ledger": "do not lose"},
		}
		if err := env.Client.Create(ctx, foreign); err != nil {
			t.Fatal(err)
		}
		if err := env.Client.Create(ctx, newApp(ns, name, map[string]any{"data": "mine", "hook": hook})); err != nil {
			t.Fatal(err)
		}
		var msg string
		testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
			_, st, err := getApp(ctx, env, ns, name)
			if err != nil {
				return err
			}
			c := condition(st, api.ConditionReleased)
			if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonChartError) {
				return fmt.Errorf("want Released False %s: %+v", api.ReasonChartError, st.Conditions)
			}
			msg = c.Message
			return nil
		})
		if !strings.Contains(msg, `ConfigMap "`+name+`-config"`) || !strings.Contains(msg, "exists and cannot be imported into the current release") {
			t.Errorf("the condition does not name the object in the way: %s", msg)
		}
		untouched := func() {
			t.Helper()
			cm := &corev1.ConfigMap{}
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), cm); err != nil {
				t.Fatalf("the object that was there first: %v", err)
			}
			if cm.UID != foreign.UID || cm.Data["ledger"] != "do not lose" || cm.Data["data"] != "" ||
				cm.Labels[api.LabelManaged] != "" || cm.Annotations["meta.helm.sh/release-name"] != "" || len(cm.OwnerReferences) > 0 {
				t.Fatalf("the object that was there first was changed: uid %s (was %s), data %v, labels %v, annotations %v, owners %v",
					cm.UID, foreign.UID, cm.Data, cm.Labels, cm.Annotations, cm.OwnerReferences)
			}
		}
		untouched()
		// What the install created is gone again; nothing else is left.
		testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
			for _, o := range []client.Object{&appsv1.Deployment{}, &corev1.Service{}} {
				if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, o); !apierrors.IsNotFound(err) {
					return fmt.Errorf("%T %s left by the refused install (err=%v)", o, name, err)
				}
			}
			return nil
		})
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name + "-prepare"}, &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			t.Errorf("the pre-install hook ran for an install that was refused (err=%v)", err)
		}
		if revs := releaseSecrets(t, env, ns, name); len(revs) > 0 {
			t.Errorf("the refused install stored %d revisions, want none", len(revs))
		}

		if err := env.Client.Delete(ctx, newApp(ns, name, nil)); err != nil {
			t.Fatal(err)
		}
		waitGone(t, env, appGVK, ns, name, time.Minute)
		untouched()
	}
}
