package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A live list entry no stored revision names, that chartkeeper itself
// wrote (an action interrupted before its record said what it applied:
// here the edit is made with chartkeeper's field manager), does not wedge
// the release. Helm's three-way merge of the previous
// manifest (port 80), the new one (9090) and the live Service (8080) adds
// the desired port next to the live one; the API server refuses two
// unnamed ports, and so it refused every upgrade and rollback after,
// until the retries were spent (make chaos lost releases so). The upgrade
// is repaired: merged again from what is live, it leaves the one port the
// chart asks for. (An entry someone else wrote is theirs: the repair
// leaves it, see TestRepairKeepsWhatOthersAdded.)
func TestUpgradeRepairsAListNoRevisionNames(t *testing.T) {
	parallel(t, quick) // appFixture: its own namespace, its operator confined to it
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	app := newApp(ns, "web", map[string]any{"port": 80})
	app.SetAnnotations(map[string]string{api.AnnotationDrift: "disabled"})
	if err := env.Client.Create(ctx, app); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteApps(t, env, ns) })
	waitReady(t, env, ns, "web", 1)

	var svc corev1.Service
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	if err := env.Client.Get(ctx, key, &svc); err != nil {
		t.Fatal(err)
	}
	svc.Spec.Ports[0].Port = 8080
	if err := env.Client.Update(ctx, &svc, client.FieldOwner(api.FieldManager)); err != nil {
		t.Fatal(err)
	}

	patchSpec(t, env, ns, "web", map[string]any{"port": 9090})
	st := waitReady(t, env, ns, "web", 2)
	if err := env.Client.Get(ctx, key, &svc); err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 9090 {
		t.Fatalf("Service ports %+v, want only 9090", svc.Spec.Ports)
	}
	if r := condition(st, api.ConditionReleased); r.Status != metav1.ConditionTrue {
		t.Errorf("Released %+v", r)
	}
	testenv.Eventually(t, 30*time.Second, func(context.Context) error {
		if s := latestReleaseStatus(t, env, ns, "web"); s != "deployed" {
			return fmt.Errorf("latest revision %s", s)
		}
		return nil
	})
}
