package controller

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// childChartFiles is a chart that releases a custom resource (a Note, the
// test kind, that no controller here reconciles), as charts of operators'
// resources do: Helm's upgrade merge-patches such objects from the one
// manifest to the other, leaving fields neither changes as they are.
var childChartFiles = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: child\nversion: 1.0.0\n",
	"values.yaml": "greeting: hello\ntone: warm\n",
	"templates/note.yaml": `apiVersion: test.chartkeeper.dev/v1
kind: Note
metadata:
  name: {{ .Release.Name }}-child
spec:
  greeting: {{ .Values.greeting | quote }}
  tone: {{ .Values.tone | quote }}
`,
}

// testEditKeptByAnUpgradeIsDrift: a released custom resource edited by
// hand in a field the chart sets, then an upgrade that changes another
// field: the upgrade's merge patch keeps the edit, so it is still drift
// after it, and is put back.
func (e *env) testEditKeptByAnUpgradeIsDrift(t *testing.T) {
	e.editThenUpgrade(t, "parent", false)
}

// testEditKeptByAnUpgradeAfterARestart: the same, with the operator
// restarted between the edit and the upgrade: the engine that upgrades
// has no baseline of the child to go by, and the upgrade's write must not
// become one.
func (e *env) testEditKeptByAnUpgradeAfterARestart(t *testing.T) {
	e.editThenUpgrade(t, "restarted", true)
}

// editThenUpgrade releases a child custom resource, edits a field of it
// the chart sets, (restarts the engine,) upgrades with another field
// changed, and expects the edit put back.
func (e *env) editThenUpgrade(t *testing.T, name string, restart bool) {
	f := e.newFixture(t, fixtureOptions{chart: "childchart"})
	f.start(t)
	r := f.reconciler(e.cl)
	f.create(t, f.note(name, nil))
	f.settle(t, r, name)
	ctx := context.Background()
	child := func() *unstructured.Unstructured {
		t.Helper()
		u, err := f.get(ctx, name+"-child")
		if err != nil {
			t.Fatalf("the release's Note: %v", err)
		}
		return u
	}
	c := child()
	if err := unstructured.SetNestedField(c.Object, "cold", "spec", "tone"); err != nil {
		t.Fatal(err)
	}
	if err := e.cl.Update(ctx, c); err != nil {
		t.Fatal(err)
	}
	if restart {
		f.engine = f.newEngine(t)
		r = f.reconciler(e.cl)
	}
	parent := f.mustGet(t, name)
	parent.Object["spec"] = map[string]any{"greeting": "changed"}
	if err := e.cl.Update(ctx, parent); err != nil {
		t.Fatal(err)
	}
	f.settle(t, r, name)
	spec, _, _ := unstructured.NestedStringMap(child().Object, "spec")
	if spec["greeting"] != "changed" || spec["tone"] != "warm" {
		t.Errorf("after the upgrade settled the child's spec is %v, want greeting changed and the released tone warm", spec)
	}
}
