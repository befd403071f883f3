package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var (
	driftAppGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "DriftApp"}
	warnAppGVK  = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "WarnApp"}
)

func driftWatches() string {
	return filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-drift.yaml")
}

// driftOperator runs the operator on the drift watches, confined to one
// namespace; it can be stopped and started again.
type driftOperator struct {
	t          *testing.T
	env        *testenv.Env
	ns         string
	kubeconfig string
	running    *process
}

func (o *driftOperator) start() {
	o.t.Helper()
	o.running = startOperatorEnv(o.t, []string{"WATCH_NAMESPACE=" + o.ns}, o.kubeconfig, driftWatches(), "--metrics-bind-address", "0")
}

func (o *driftOperator) stop() {
	o.t.Helper()
	if err := o.running.interrupt(o.t, 30*time.Second); err != nil {
		o.t.Fatalf("operator exit: %v", err)
	}
	o.running = nil
}

// driftFixture: the drift watches' CRDs, a fresh namespace and an
// operator confined to it. The resources are deleted at the end while an
// operator runs (one is started for that if the test left it stopped).
func driftFixture(t *testing.T) (*testenv.Env, string, *driftOperator) {
	t.Helper()
	env := testenv.Cluster(t)
	installCRDs(t, env, driftWatches())
	ns := env.Namespace(t)
	op := &driftOperator{t: t, env: env, ns: ns, kubeconfig: operatorKubeconfig(t, env, driftWatches())}
	op.start()
	t.Cleanup(func() {
		// A restarted operator's own Cleanup (registered later) has killed
		// it by now: Wait has returned, so ProcessState is set.
		if op.running == nil || op.running.cmd.ProcessState != nil {
			op.start()
		}
		deleteAll(t, env, ns, []schema.GroupVersionKind{driftAppGVK, warnAppGVK})
	})
	return env, ns, op
}

// crStatus reads a custom resource's status.
func crStatus(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) api.Status {
	t.Helper()
	_, st, err := getCR(context.Background(), env, gvk, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// editConfigMap sets data.data of a released ConfigMap by hand.
func editConfigMap(t *testing.T, env *testenv.Env, ns, name, value string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if err := env.Client.Patch(context.Background(), cm, client.RawPatch(types.MergePatchType, []byte(fmt.Sprintf(`{"data":{"data":%q}}`, value)))); err != nil {
		t.Fatal(err)
	}
}

func configMapData(ctx context.Context, env *testenv.Env, ns, name string) (string, error) {
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, cm); err != nil {
		return "", err
	}
	return cm.Data["data"], nil
}

func waitConfigMapData(t *testing.T, env *testenv.Env, ns, name, want string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		got, err := configMapData(ctx, env, ns, name)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("ConfigMap %s data %q, want %q", name, got, want)
		}
		return nil
	})
}

func deploymentReplicas(t *testing.T, env *testenv.Env, ns, name string) int32 {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
		t.Fatal(err)
	}
	return *d.Spec.Replicas
}

// waitDrifted waits until the resource's Drifted condition is True and
// names every one of want; it returns the condition.
func waitDrifted(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, want ...string) metav1.Condition {
	t.Helper()
	var c metav1.Condition
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			return err
		}
		c = condition(st, api.ConditionDrifted)
		if c.Status != metav1.ConditionTrue {
			return fmt.Errorf("Drifted is %q: %+v", c.Status, st.Conditions)
		}
		for _, w := range want {
			if !strings.Contains(c.Message, w) {
				return fmt.Errorf("Drifted does not name %q: %s", w, c.Message)
			}
		}
		return nil
	})
	return c
}

// scaledWeb releases DriftApp web with 2 replicas and scales its
// Deployment to 5 through the scale subresource, as kubectl scale or an
// HPA does.
func scaledWeb(t *testing.T, env *testenv.Env, ns string) {
	t.Helper()
	ctx := context.Background()
	if err := env.Client.Create(ctx, newCR(driftAppGVK, ns, "web", map[string]any{"replicas": 2})); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, driftAppGVK, ns, "web")
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := env.Client.SubResource("scale").Patch(ctx, dep, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":5}}`))); err != nil {
		t.Fatalf("scaling: %v", err)
	}
}

// With drift.ignore on /spec/replicas of Deployments, scaling the released
// Deployment (as kubectl scale or an HPA does, through the scale
// subresource) is left alone across reconciles, while a hand edit of a
// ConfigMap of the same release is still restored.
func TestDriftIgnoredReplicasSurviveWhileConfigMapIsRestored(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := driftFixture(t)
	scaledWeb(t, env, ns)
	// Each hand edit of the ConfigMap makes the operator reconcile and
	// restore it; the scaled replicas must survive every one of them.
	for i := range 3 {
		editConfigMap(t, env, ns, "web-config", fmt.Sprintf("hand-%d", i))
		waitConfigMapData(t, env, ns, "web-config", "v1")
		if n := deploymentReplicas(t, env, ns, "web"); n != 5 {
			t.Fatalf("after restore %d: Deployment replicas %d, want the scaled 5 left alone", i, n)
		}
	}
	waitCRReady(t, env, driftAppGVK, ns, "web")
	st := crStatus(t, env, driftAppGVK, ns, "web")
	if c := condition(st, api.ConditionDrifted); c.Status == metav1.ConditionTrue {
		t.Errorf("Drifted after correction: %+v", c)
	}
	if n := deploymentReplicas(t, env, ns, "web"); n != 5 {
		t.Errorf("Deployment replicas %d, want the scaled 5", n)
	}
}

// An upgrade that does not change the replicas leaves a Deployment scaled
// by an autoscaler (replicas in drift.ignore) at its scale, while it
// changes what the chart changed. Helm's own upgrade patches the live
// object back to the chart's replicas (a three-way merge with the live
// object), and the autoscaler then has to scale it again.
func TestUpgradeLeavesIgnoredReplicasAlone(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := driftFixture(t)
	ctx := context.Background()
	scaledWeb(t, env, ns)
	// A restored hand edit shows the operator has looked at the release
	// since the scale.
	editConfigMap(t, env, ns, "web-config", "hand")
	waitConfigMapData(t, env, ns, "web-config", "v1")

	u := newCR(driftAppGVK, ns, "web", nil)
	if err := env.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"data":"v2"}}`))); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, driftAppGVK, ns, "web", 2)
	waitConfigMapData(t, env, ns, "web-config", "v2")
	if n := deploymentReplicas(t, env, ns, "web"); n != 5 {
		t.Errorf("after the upgrade: Deployment replicas %d, want the scaled 5 left alone", n)
	}
	// The chart changing the replicas still sets them.
	if err := env.Client.Patch(ctx, u, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":3}}`))); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, driftAppGVK, ns, "web", 3)
	if n := deploymentReplicas(t, env, ns, "web"); n != 3 {
		t.Errorf("after an upgrade to replicas 3: Deployment replicas %d, want 3", n)
	}
}

// warn mode, set by the watch or by the chartkeeper.dev/drift annotation,
// reports drift in the Drifted condition (objects and fields) and restores
// nothing; the resource stays Ready. An invalid annotation value is named
// in a condition and the watch's mode applies.
func TestDriftWarnReportsAndRestoresNothing(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := driftFixture(t)
	ctx := context.Background()
	byAnnotation := newCR(driftAppGVK, ns, "ann", map[string]any{})
	byAnnotation.SetAnnotations(map[string]string{api.AnnotationDrift: "warn"})
	invalid := newCR(driftAppGVK, ns, "bad", map[string]any{})
	invalid.SetAnnotations(map[string]string{api.AnnotationDrift: "sometimes"})
	for _, u := range []client.Object{newCR(warnAppGVK, ns, "warned", map[string]any{}), byAnnotation, invalid} {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		gvk  schema.GroupVersionKind
		name string
	}{{warnAppGVK, "warned"}, {driftAppGVK, "ann"}} {
		waitCRReady(t, env, c.gvk, ns, c.name)
		editConfigMap(t, env, ns, c.name+"-config", "by hand")
		cond := waitDrifted(t, env, c.gvk, ns, c.name, "ConfigMap "+ns+"/"+c.name+"-config", "/data/data")
		if cond.Reason != string(api.ReasonDriftDetected) {
			t.Errorf("%s: Drifted reason %s", c.name, cond.Reason)
		}
		if got, err := configMapData(ctx, env, ns, c.name+"-config"); err != nil || got != "by hand" {
			t.Errorf("%s: ConfigMap data %q (%v), want the hand edit kept", c.name, got, err)
		}
		waitCRReady(t, env, c.gvk, ns, c.name)
	}

	waitCRReady(t, env, driftAppGVK, ns, "bad")
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, driftAppGVK, ns, "bad")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionDrifted); c.Reason != string(api.ReasonInvalidDriftMode) || !strings.Contains(c.Message, `"sometimes"`) {
			return fmt.Errorf("no condition names the invalid annotation: %+v", st.Conditions)
		}
		return nil
	})
	editConfigMap(t, env, ns, "bad-config", "by hand")
	waitConfigMapData(t, env, ns, "bad-config", "v1") // the watch's mode: correct
}

// An edit made while the operator is stopped is found when it starts:
// restored in correct mode, reported in warn mode.
func TestDriftWhileOperatorStoppedIsFoundAtStart(t *testing.T) {
	parallel(t, 15*time.Second)
	env, ns, op := driftFixture(t)
	ctx := context.Background()
	for _, u := range []client.Object{newCR(driftAppGVK, ns, "fixed", map[string]any{}), newCR(warnAppGVK, ns, "told", map[string]any{})} {
		if err := env.Client.Create(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	waitCRReady(t, env, driftAppGVK, ns, "fixed")
	waitCRReady(t, env, warnAppGVK, ns, "told")
	st := crStatus(t, env, warnAppGVK, ns, "told")
	if c := condition(st, api.ConditionDrifted); c.Status == metav1.ConditionTrue {
		t.Fatalf("told drifted before any edit: %+v", c)
	}

	op.stop()
	editConfigMap(t, env, ns, "fixed-config", "while stopped")
	editConfigMap(t, env, ns, "told-config", "while stopped")
	op.start()

	waitConfigMapData(t, env, ns, "fixed-config", "v1")
	waitDrifted(t, env, warnAppGVK, ns, "told", "ConfigMap "+ns+"/told-config", "/data/data")
	if got, err := configMapData(ctx, env, ns, "told-config"); err != nil || got != "while stopped" {
		t.Errorf("told's ConfigMap %q (%v), want the edit kept (warn)", got, err)
	}
}
