package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/intern"
	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// These tests run the controller against a real API server (envtest from
// bin/) with a real manager, release engine and Helm client, and a tiny
// chart (one ConfigMap) behind a test kind.

// waitTimeout bounds every wait for the cluster to reach a state.
const waitTimeout = 30 * time.Second

// The test kind.
const (
	group   = "test.chartkeeper.dev"
	version = "v1"
	kind    = "Note"
)

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: notes.test.chartkeeper.dev
spec:
  group: test.chartkeeper.dev
  names: {kind: Note, listKind: NoteList, plural: notes, singular: note}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      subresources: {status: {}}
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// chartFiles is the test chart: one ConfigMap named after the release.
var chartFiles = map[string]string{
	"Chart.yaml":  "apiVersion: v2\nname: note\nversion: 1.0.0\n",
	"values.yaml": "greeting: hello\n",
	"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  greeting: {{ .Values.greeting | quote }}
`,
}

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m)
}

// env is the API server shared by the subtests of TestController.
type env struct {
	cfg *rest.Config
	cl  client.Client // uncached
	dir string        // holds the chart
}

// TestController runs each behaviour of the controller as a subtest over
// one API server.
func TestController(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"crds/notes.yaml": crdYAML})
	for name, content := range chartFiles {
		writeFiles(t, dir, map[string]string{filepath.Join("chart", name): content})
	}
	for name, content := range childChartFiles {
		writeFiles(t, dir, map[string]string{filepath.Join("childchart", name): content})
	}
	for name, content := range rolloutChartFiles {
		writeFiles(t, dir, map[string]string{filepath.Join("rolloutchart", name): content})
	}
	cfg := testenv.APIServer(t, filepath.Join(dir, "crds"))
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{cfg: cfg, cl: cl, dir: dir}
	t.Run("Finalizer", e.testFinalizer)
	t.Run("ShardSkip", e.testShardSkip)
	t.Run("StatusPatchedOnlyWhenChanged", e.testStatusPatches)
	t.Run("RewordingsShareABudget", e.testRewordingsShareABudget)
	t.Run("DeletionEndsWhenTheObjectsAreGone", e.testDeletionEndsWhenTheObjectsAreGone)
	t.Run("StaleCacheGuard", e.testStaleCacheGuard)
	t.Run("BookKeepsNoCopyOnceCached", e.testBookKeepsNoCopyOnceCached)
	t.Run("BookLetsGoOnceCached", e.testBookLetsGoOnceCached)
	t.Run("EditRightAfterRelease", e.testEditRightAfterRelease)
	t.Run("EditKeptByAnUpgradeIsDrift", e.testEditKeptByAnUpgradeIsDrift)
	t.Run("EditKeptByAnUpgradeAfterARestart", e.testEditKeptByAnUpgradeAfterARestart)
	t.Run("SecretToResource", e.testSecretToResource)
	t.Run("SecretEventReconciles", e.testSecretEventReconciles)
	t.Run("ValuesSources", e.testValuesSources)
	t.Run("DependentsCacheKeepsWhatIsRead", e.testDependentsCacheKeepsWhatIsRead)
	t.Run("CacheKeepsResourcesAsJSON", e.testCacheKeepsResourcesAsJSON)
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixture is one subtest's namespace, watch, manager and release engine.
// The manager's caches (and the dependents cache) are confined to the
// namespace, so fixtures do not see each other's resources.
type fixture struct {
	env    *env
	ns     string
	target release.Target
	mgr    manager.Manager
	deps   *Dependents
	engine *release.Engine
}

// fixtureOptions vary a fixture.
type fixtureOptions struct {
	// watch is added to the watch entry (YAML lines after "chart:").
	watch string
	// newClient replaces the manager's client constructor.
	newClient client.NewClientFunc
	// chart is the chart's directory under env.dir ("": "chart").
	chart string
}

// newFixture builds a manager, the dependents cache and a release engine as
// the operator does (internal/operator/controllers.go); nothing is started.
func (e *env) newFixture(t *testing.T, o fixtureOptions) *fixture {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-"}}
	if err := e.cl.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	chart := o.chart
	if chart == "" {
		chart = "chart"
	}
	entry := fmt.Sprintf("- group: %s\n  version: %s\n  kind: %s\n  chart: %s\n%s", group, version, kind, chart, o.watch)
	ws, err := watches.Parse([]byte(entry), e.dir)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(e.cfg, ctrl.Options{
		Logger:                 logr.Discard(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}, DefaultTransform: CacheTransform(ws, intern.Kept)},
		Client:                 client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		NewClient:              o.newClient,
	})
	if err != nil {
		t.Fatal(err)
	}
	deps, err := NewDependents(mgr, []string{ns.Name}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{env: e, ns: ns.Name, target: release.NewTarget(ws[0]), mgr: mgr, deps: deps}
	f.engine = f.newEngine(t)
	return f
}

// newEngine builds a release engine over the fixture's caches, with a Helm
// client of its own, as the operator does when it starts.
func (f *fixture) newEngine(t *testing.T) *release.Engine {
	t.Helper()
	hc, err := helm.New(f.env.cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	live, err := client.New(f.env.cfg, client.Options{Scheme: f.mgr.GetScheme(), Mapper: f.mgr.GetRESTMapper(), HTTPClient: f.mgr.GetHTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := release.NewEngine(hc, f.deps, live, release.WithWatchKind(f.deps.WatchKind))
	if err != nil {
		t.Fatal(err)
	}
	return engine
}

// setup registers the watch's controller with the manager.
func (f *fixture) setup(t *testing.T) {
	t.Helper()
	if err := Setup(f.mgr, f.deps, nil, f.engine, f.target, logr.Discard()); err != nil {
		t.Fatal(err)
	}
}

// start runs the manager until the test ends.
func (f *fixture) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
}

// reconciler returns a Reconciler of the fixture's watch over cl, as Setup
// builds it, for tests that send it requests themselves.
func (f *fixture) reconciler(cl client.Client) *Reconciler {
	return &Reconciler{client: cl, engine: f.engine, target: f.target, log: logr.Discard(), statuses: newStatusBook(clock.RealClock{}), clock: clock.RealClock{}}
}

// note is a custom resource of the test kind.
func (f *fixture) note(name string, labels map[string]string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(f.target.Watch.GroupVersionKind())
	u.SetNamespace(f.ns)
	u.SetName(name)
	u.SetLabels(labels)
	u.SetFinalizers(finalizers)
	u.Object["spec"] = map[string]any{"greeting": "hi " + name}
	return u
}

// create creates obj and, when the test ends, lets it go (its finalizers
// removed) so that the namespace holds nothing blocked.
func (f *fixture) create(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	if err := f.env.cl.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	nn := client.ObjectKeyFromObject(obj)
	t.Cleanup(func() {
		ctx := context.Background()
		cur, err := f.get(ctx, nn.Name)
		if err != nil {
			return
		}
		cur.SetFinalizers(nil)
		_ = f.env.cl.Update(ctx, cur)
		_ = f.env.cl.Delete(ctx, cur)
	})
}

// get reads a custom resource of the fixture from the API server.
func (f *fixture) get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(f.target.Watch.GroupVersionKind())
	err := f.env.cl.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: name}, u)
	return u, err
}

// mustGet is get that fails the test on error.
func (f *fixture) mustGet(t *testing.T, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := f.get(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// request is the reconcile request of a custom resource of the fixture.
func (f *fixture) request(name string) ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: f.ns, Name: name}}
}

// releaseSecrets counts the Helm release Secrets (revisions) of a release.
func (f *fixture) releaseSecrets(ctx context.Context, release string) (int, error) {
	var list corev1.SecretList
	err := f.env.cl.List(ctx, &list, client.InNamespace(f.ns), client.MatchingLabels{"owner": "helm", "name": release})
	return len(list.Items), err
}

// released reports whether the chart's ConfigMap of a release exists.
func (f *fixture) released(ctx context.Context, release string) (bool, error) {
	err := f.env.cl.Get(ctx, types.NamespacedName{Namespace: f.ns, Name: release}, &corev1.ConfigMap{})
	if client.IgnoreNotFound(err) != nil {
		return false, err
	}
	return err == nil, nil
}

// ready returns nil once the resource's status says Ready for its generation.
func (f *fixture) ready(ctx context.Context, name string) error {
	u, err := f.get(ctx, name)
	if err != nil {
		return err
	}
	st, err := api.StatusOf(u)
	if err != nil {
		return err
	}
	if !meta.IsStatusConditionTrue(st.Conditions, api.ConditionReady) || st.ObservedGeneration != u.GetGeneration() {
		return fmt.Errorf("%s not ready: %+v", name, st.Conditions)
	}
	return nil
}

// settle sends r requests for the resource until its status says Ready.
func (f *fixture) settle(t *testing.T, r *Reconciler, name string) {
	t.Helper()
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
		if _, err := r.Reconcile(ctx, f.request(name)); err != nil {
			return err
		}
		return f.ready(ctx, name)
	})
}
