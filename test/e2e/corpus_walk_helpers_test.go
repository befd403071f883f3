package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

const walkGroup = "corpus.chartkeeper.dev"

// walkEffect is a field of a released object that an upgrade changes: the
// object of kind whose name ends with suffix ("" for any), the JSONPath
// path, and the value wanted ("$release" stands for the release name).
type walkEffect struct{ kind, suffix, path, want string }

// walkKinds are the kinds whose released objects the walk follows: what
// the corpus charts release (a CRD a chart ships is never deleted, so it is
// not followed).
var walkKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "batch", Version: "v1", Kind: "CronJob"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
}

func walkKind(t *testing.T, kind string) schema.GroupVersionKind {
	t.Helper()
	for _, k := range walkKinds {
		if k.Kind == kind {
			return k
		}
	}
	t.Fatalf("the walk does not follow kind %s: add it to walkKinds", kind)
	return schema.GroupVersionKind{}
}

// walkChart packages chartDir with create-api into a temporary project and
// walks it: install, upgrade, violation, delete.
func walkChart(t *testing.T, chartDir string, row walkRow) {
	env := testenv.Cluster(t)
	ctx := context.Background()
	proj := t.TempDir()
	chartkeeper(t, 0, "create-api", "--chart", chartDir, "--group", walkGroup, "--version", "v1alpha1",
		"--kind", row.kind, "--project-dir", proj)
	deleteShippedCRDs(t, env, filepath.Join(proj, "charts", filepath.Base(chartDir), "crds"))
	ns, s := runPackaged(t, env, proj)
	gvk, name := s.GroupVersionKind(), s.GetName()
	owner := fmt.Sprintf("%s/%s/%s/%s", gvk.Group, gvk.Kind, ns, name)
	t.Cleanup(func() { deleteOwnedCRDs(env, owner) })
	sampleSpec, _ := s.Object["spec"].(map[string]any)

	// Install.
	if err := env.Client.Create(ctx, s); err != nil {
		t.Fatalf("creating the sample: %v", err)
	}
	waitCRRevision(t, env, gvk, ns, name, 1)

	// Upgrade.
	var before string
	if row.unchanged != nil {
		before = readField(t, env, ns, owner, *row.unchanged)
	}
	patchCR(t, env, gvk, ns, name, row.upgrade)
	waitCRRevision(t, env, gvk, ns, name, 2)
	checkEffect(t, env, ns, owner, name, row.effect)
	if row.unchanged != nil {
		if after := readField(t, env, ns, owner, *row.unchanged); after != before {
			t.Errorf("the upgrade changed %s *%s %s: %q, then %q", row.unchanged.kind, row.unchanged.suffix, row.unchanged.path, before, after)
		}
	}

	// Violation.
	bad := newCR(gvk, ns, name+"-bad", mergeValues(deepCopyMap(sampleSpec), row.violation))
	err := env.Client.Create(ctx, bad)
	switch {
	case err == nil:
		_ = env.Client.Delete(ctx, bad)
		t.Errorf("the API server accepted %s (want it refused naming %s)", mustJSON(row.violation), row.field)
	case !strings.Contains(err.Error(), row.field):
		t.Errorf("the API server refused %s without naming %s: %v", mustJSON(row.violation), row.field, err)
	}

	// Delete.
	released := ownedObjects(t, env, ns, owner)
	if len(released) == 0 {
		t.Fatalf("no released object carries %s=%s", api.AnnotationOwner, owner)
	}
	if err := env.Client.Delete(ctx, newCR(gvk, ns, name, nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, gvk, ns, name, 3*time.Minute)
	for _, o := range released {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(o.GroupVersionKind())
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(&o), got)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
		case got.GetAnnotations()["helm.sh/resource-policy"] == "keep":
		case got.GetDeletionTimestamp() != nil:
			// Going (a finalizer of Kubernetes' own, such as a PVC's).
		default:
			t.Errorf("%s %s is still there after the release was uninstalled", o.GetKind(), o.GetName())
		}
	}
	if row.preDelete != "" {
		checkJobCompleted(t, env, ns, row.preDelete)
	}
}

// waitCRRevision waits until the resource is Ready for its generation at
// release revision rev.
func waitCRRevision(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string, rev int) {
	t.Helper()
	var stalled *metav1.Condition
	testenv.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionStalled); c.Status == metav1.ConditionTrue && st.ObservedGeneration == u.GetGeneration() {
			stalled = &c // nothing more happens until the spec changes
			return nil
		}
		ready := condition(st, api.ConditionReady)
		if ready.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() || st.Release == nil || st.Release.Revision != rev {
			return fmt.Errorf("%s %s not Ready at revision %d: release %+v, conditions %+v", gvk.Kind, name, rev, st.Release, st.Conditions)
		}
		return nil
	})
	if stalled != nil {
		t.Fatalf("%s %s is Stalled (want Ready at revision %d): %s: %s", gvk.Kind, name, rev, stalled.Reason, stalled.Message)
	}
}

// checkEffect finds the released object of the effect and compares the
// field.
func checkEffect(t *testing.T, env *testenv.Env, ns, owner, release string, e walkEffect) {
	t.Helper()
	want := strings.ReplaceAll(e.want, "$release", release)
	jp := jsonpath.New("effect")
	if err := jp.Parse(e.path); err != nil {
		t.Fatal(err)
	}
	gvk := walkKind(t, e.kind)
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{api.LabelManaged: "true"}); err != nil {
			return err
		}
		var seen []string
		for _, o := range list.Items {
			if o.GetAnnotations()[api.AnnotationOwner] != owner {
				continue
			}
			var sb strings.Builder
			if err := jp.Execute(&sb, o.Object); err == nil && sb.String() == want && strings.HasSuffix(o.GetName(), e.suffix) {
				return nil
			}
			seen = append(seen, fmt.Sprintf("%s: %q", o.GetName(), sb.String()))
		}
		return fmt.Errorf("no released %s *%s has %s = %q: %v", e.kind, e.suffix, e.path, want, seen)
	})
}

// readField reads a field of the released object of e (one only).
func readField(t *testing.T, env *testenv.Env, ns, owner string, e walkEffect) string {
	t.Helper()
	jp := jsonpath.New("field")
	if err := jp.Parse(e.path); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range ownedObjects(t, env, ns, owner) {
		if o.GetKind() != e.kind || !strings.HasSuffix(o.GetName(), e.suffix) {
			continue
		}
		var sb strings.Builder
		if err := jp.Execute(&sb, o.Object); err != nil {
			t.Fatalf("%s %s: %s: %v", e.kind, o.GetName(), e.path, err)
		}
		out = append(out, sb.String())
	}
	if len(out) != 1 || out[0] == "" {
		t.Fatalf("want one released %s *%s with %s, got %q", e.kind, e.suffix, e.path, out)
	}
	return out[0]
}

// ownedObjects lists the released objects of the resource named by owner.
func ownedObjects(t *testing.T, env *testenv.Env, ns, owner string) []unstructured.Unstructured {
	t.Helper()
	var out []unstructured.Unstructured
	for _, gvk := range walkKinds {
		var list unstructured.UnstructuredList
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		opts := []client.ListOption{client.MatchingLabels{api.LabelManaged: "true"}}
		if !strings.HasPrefix(gvk.Kind, "Cluster") {
			opts = append(opts, client.InNamespace(ns))
		}
		if err := env.Client.List(context.Background(), &list, opts...); err != nil {
			t.Fatalf("listing %s: %v", gvk.Kind, err)
		}
		for _, o := range list.Items {
			if o.GetAnnotations()[api.AnnotationOwner] == owner {
				o.SetGroupVersionKind(gvk)
				out = append(out, o)
			}
		}
	}
	return out
}

// checkJobCompleted looks for the Job controller's Completed event of a
// Job whose name ends with suffix: a hook Job deleted on success leaves it.
func checkJobCompleted(t *testing.T, env *testenv.Env, ns, suffix string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		var events corev1.EventList
		if err := env.Client.List(ctx, &events, client.InNamespace(ns)); err != nil {
			return err
		}
		var jobs []string
		for _, e := range events.Items {
			if e.InvolvedObject.Kind != "Job" {
				continue
			}
			if strings.HasSuffix(e.InvolvedObject.Name, suffix) && e.Reason == "Completed" {
				return nil
			}
			jobs = append(jobs, e.InvolvedObject.Name+":"+e.Reason)
		}
		return fmt.Errorf("no Job *%s completed (Job events: %v)", suffix, jobs)
	})
}

// deleteShippedCRDs deletes, at the end of the test, the CRDs a chart
// ships in crds/ (Helm never deletes them).
func deleteShippedCRDs(t *testing.T, env *testenv.Env, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		for _, doc := range strings.Split(string(readFile(t, f)), "\n---") {
			crd := &apiextv1.CustomResourceDefinition{}
			if yaml.Unmarshal([]byte(doc), crd) != nil || crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
				continue
			}
			name := crd.Name
			t.Cleanup(func() {
				got := &apiextv1.CustomResourceDefinition{}
				if err := env.Client.Get(context.Background(), types.NamespacedName{Name: name}, got); err == nil {
					_ = env.Client.Delete(context.Background(), got)
				}
			})
		}
	}
}

// deleteOwnedCRDs deletes the CRDs a chart released from its templates
// (never deleted on uninstall).
func deleteOwnedCRDs(env *testenv.Env, owner string) {
	var list apiextv1.CustomResourceDefinitionList
	if err := env.Client.List(context.Background(), &list, client.MatchingLabels{api.LabelManaged: "true"}); err != nil {
		return
	}
	for i := range list.Items {
		if list.Items[i].Annotations[api.AnnotationOwner] == owner {
			_ = env.Client.Delete(context.Background(), &list.Items[i])
		}
	}
}

// mergeValues merges patch into base (maps merged key by key, anything
// else replaced) and returns base.
func mergeValues(base, patch map[string]any) map[string]any {
	if base == nil {
		base = map[string]any{}
	}
	for k, v := range patch {
		pm, ok := v.(map[string]any)
		bm, ok2 := base[k].(map[string]any)
		if ok && ok2 {
			base[k] = mergeValues(bm, pm)
			continue
		}
		base[k] = v
	}
	return base
}

func deepCopyMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return (&unstructured.Unstructured{Object: m}).DeepCopy().Object
}
