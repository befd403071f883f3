package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A Deployment whose status keeps changing while the operator compares it
// with its released form (its controller writing a rollout's progress) has
// not drifted: each scale bumps its generation, so the operator compares
// it again, and every comparison runs while its status is rewritten. None
// may name the Deployment as drifted or restored (condition or Event);
// the scale, whose replicas drift.ignore names, stays.
func TestStatusWritesDuringADriftCheckAreNotDrift(t *testing.T) {
	parallel(t, 25*time.Second)
	env, ns, _ := driftFixture(t)
	ctx := context.Background()
	if err := env.Client.Create(ctx, newCR(driftAppGVK, ns, "web", map[string]any{"replicas": 2})); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, driftAppGVK, ns, "web")

	churn, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 4 { // four writers: a write lands inside most comparisons
		wg.Go(func() { rewriteStatus(churn, env, ns, "web") })
	}
	// Churn only while the scales are compared: the writes load the
	// cluster the other tests share.
	defer func() { stop(); wg.Wait() }()
	for i, replicas := range []int{5, 6, 7} {
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
		if err := env.Client.SubResource("scale").Patch(ctx, dep, client.RawPatch(types.MergePatchType, fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas))); err != nil {
			t.Fatalf("scaling: %v", err)
		}
		// A restored hand edit shows the operator has reconciled since
		// the scale (the Deployment's event queues the same request).
		editConfigMap(t, env, ns, "web-config", fmt.Sprintf("hand-%d", i))
		waitConfigMapData(t, env, ns, "web-config", "v1")
	}
	stop()
	wg.Wait()

	if n := deploymentReplicas(t, env, ns, "web"); n != 7 {
		t.Errorf("Deployment replicas %d, want the scaled 7 left alone", n)
	}
	if c := condition(crStatus(t, env, driftAppGVK, ns, "web"), api.ConditionDrifted); strings.Contains(c.Message, "Deployment") {
		t.Errorf("Drifted names the Deployment: %+v", c)
	}
	var evs corev1.EventList
	if err := env.Client.List(ctx, &evs, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for _, e := range evs.Items {
		if strings.HasPrefix(e.Reason, "Drift") && strings.Contains(e.Message, "Deployment") {
			t.Errorf("event %s: %s", e.Reason, e.Message)
		}
	}
}

// rewriteStatus sets a condition of its own in the Deployment's status
// (its status subresource, as a controller does), a new message each
// time, every 20 ms, until ctx ends.
func rewriteStatus(ctx context.Context, env *testenv.Env, ns, name string) {
	for n := 0; ctx.Err() == nil; n++ {
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		patch := fmt.Appendf(nil, `{"status":{"conditions":[{"type":"Churn","status":"True","message":"write %d","lastUpdateTime":%q}]}}`, n, time.Now().UTC().Format(time.RFC3339))
		_ = env.Client.Status().Patch(ctx, dep, client.RawPatch(types.StrategicMergePatchType, patch)) // a failed write: the next one
		select {
		case <-ctx.Done():
		case <-time.After(20 * time.Millisecond):
		}
	}
}
