package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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

var webServerGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "WebServer"}

// webServerWatches writes a watches file for WebServer over the webserver
// test chart.
func webServerWatches(t *testing.T) string {
	t.Helper()
	chart := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "webserver")
	w := fmt.Sprintf(`- group: test.chartkeeper.dev
  version: v1
  kind: WebServer
  chart: %s
  maxHistory: 5
  remediation:
    retries: 0
    backoff: {initial: 1s, max: 2s}
  readiness:
    timeout: 2m
`, chart)
	file := filepath.Join(t.TempDir(), "watches.yaml")
	if err := os.WriteFile(file, []byte(w), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// The repair of a refused upgrade takes nothing from others. Another
// controller adds a sidecar container and its own ownerReference to a
// release's Deployment; an upgrade interrupted before its record said what
// it applied left the web container's port at 8080 (chartkeeper's own
// write, that no revision names). Helm's merge of the next upgrade (port
// 80 recorded, 9090 asked) adds 9090 next to 8080: two ports named http,
// which the API server refuses. The repair merges again from what is live:
// the port only chartkeeper wrote goes, the sidecar and the other owner's
// reference stay.
func TestRepairKeepsWhatOthersAdded(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := kindFixture(t, webServerWatches(t), webServerGVK)
	ctx := context.Background()
	cr := newCR(webServerGVK, ns, "web", map[string]any{"port": 80})
	cr.SetAnnotations(map[string]string{api.AnnotationDrift: "disabled"})
	if err := env.Client.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, webServerGVK, ns, "web")

	// Another controller's: a sidecar container and an ownerReference to
	// an object of its own.
	theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mesh-config"}}
	if err := env.Client.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKey{Namespace: ns, Name: "web"}
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, key, &d); err != nil {
		t.Fatal(err)
	}
	ours := d.OwnerReferences
	if len(ours) == 0 {
		t.Fatalf("the Deployment names no owner: %+v", d.ObjectMeta)
	}
	// chartkeeper's own write no revision records.
	lost := `[{"op":"replace","path":"/spec/template/spec/containers/0/ports/0/containerPort","value":8080}]`
	if err := env.Client.Patch(ctx, &d, client.RawPatch(types.JSONPatchType, []byte(lost)), client.FieldOwner(api.FieldManager)); err != nil {
		t.Fatal(err)
	}

	patch := fmt.Sprintf(`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"mesh-config","uid":%q}]},
"spec":{"template":{"spec":{"containers":[{"name":"mesh-proxy","image":"registry.example/proxy:1.0"}]}}}}`, theirs.UID)
	if err := env.Client.Patch(ctx, &d, client.RawPatch(types.StrategicMergePatchType, []byte(patch)), client.FieldOwner("mesh-injector")); err != nil {
		t.Fatal(err)
	}
	patchCR(t, env, webServerGVK, ns, "web", map[string]any{"port": 9090})
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, webServerGVK, ns, "web")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() || st.Release == nil || st.Release.Revision != 2 {
			return fmt.Errorf("not upgraded: %+v %+v", st.Release, st.Conditions)
		}
		return nil
	})
	if err := env.Client.Get(ctx, key, &d); err != nil {
		t.Fatal(err)
	}
	containers := map[string][]corev1.ContainerPort{}
	for _, c := range d.Spec.Template.Spec.Containers {
		containers[c.Name] = c.Ports
	}
	if _, ok := containers["mesh-proxy"]; !ok {
		t.Errorf("the sidecar container was removed: containers %v", containers)
	}
	if p := containers["web"]; len(p) != 1 || p[0].ContainerPort != 9090 {
		t.Errorf("web container ports %+v, want only 9090", p)
	}
	owners := map[types.UID]bool{}
	for _, r := range d.OwnerReferences {
		owners[r.UID] = true
	}
	if !owners[theirs.UID] || !owners[ours[0].UID] || len(owners) != 1+len(ours) {
		t.Errorf("ownerReferences %+v, want the release's %+v and mesh-config's (%s)", d.OwnerReferences, ours, theirs.UID)
	}
}
