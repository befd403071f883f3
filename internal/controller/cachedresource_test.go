package controller

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/dictpack"
	"github.com/chartkeeper/chartkeeper/internal/readiness"
	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// TestCachedResourceReadsBackAsDecoded: a custom resource kept as a
// cachedResource reads back (DeepCopyObject, what the cache hands out)
// equal to the resource decoded the usual way, managedFields aside.
func TestCachedResourceReadsBackAsDecoded(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{"spec and status", `{"apiVersion":"example.com/v1","kind":"Web","metadata":{"name":"a","namespace":"team-a","uid":"u-1","resourceVersion":"12","generation":3,"creationTimestamp":"2026-11-27T10:00:00Z"},
			"spec":{"replicas":2,"image":"nginx"},"status":{"observedGeneration":3,"conditions":[{"type":"Ready","status":"True","reason":"Succeeded","message":"ok","lastTransitionTime":"2026-11-27T10:01:00Z","observedGeneration":3}]}}`},
		{"metadata in full", `{"apiVersion":"example.com/v1","kind":"Web","metadata":{"name":"b","generateName":"b-","namespace":"team-a","uid":"u-2","resourceVersion":"13","generation":1,
			"creationTimestamp":"2026-11-27T10:00:00Z","deletionTimestamp":"2026-11-27T11:00:00Z","deletionGracePeriodSeconds":0,
			"labels":{"tier":"web","shard":"1"},"annotations":{"chartkeeper.dev/suspend":"true","note":"<b>&amp;</b> ünïcode"},
			"finalizers":["chartkeeper.dev/uninstall"],"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"o","uid":"u-o","controller":true,"blockOwnerDeletion":false}],
			"managedFields":[{"manager":"kubectl","operation":"Apply","apiVersion":"example.com/v1","time":"2026-11-27T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},
			"spec":{}}`},
		{"values of every JSON type", `{"apiVersion":"example.com/v1","kind":"Web","metadata":{"name":"c","namespace":"n"},
			"spec":{"int":9007199254740993,"neg":-4,"float":1.5,"exp":1e21,"zero":0,"t":true,"f":false,"null":null,"s":"<script>&","list":[1,"two",{"three":[3]},[],{}],"nested":{"a":{"b":{"c":"d"}}}},
			"extra":"a top-level field of its own"}`},
		{"no spec", `{"apiVersion":"example.com/v1","kind":"Web","metadata":{"name":"d","namespace":"n"}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := &unstructured.Unstructured{}
			if err := want.UnmarshalJSON([]byte(tc.doc)); err != nil {
				t.Fatal(err)
			}
			in := want.DeepCopy()
			want.SetManagedFields(nil)
			r, err := newCachedResource(in)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := r.DeepCopyObject().(*unstructured.Unstructured)
			if !ok {
				t.Fatalf("DeepCopyObject returned %T", r.DeepCopyObject())
			}
			if !reflect.DeepEqual(got.Object, want.Object) {
				t.Errorf("read back\n%#v\nwant\n%#v", got.Object, want.Object)
			}
			if r.GetName() != want.GetName() || r.GetResourceVersion() != want.GetResourceVersion() || r.GetGeneration() != want.GetGeneration() {
				t.Errorf("metadata as kept: %s %s %d", r.GetName(), r.GetResourceVersion(), r.GetGeneration())
			}
		})
	}
}

// TestCacheTransform: the manager cache's transform keeps a custom
// resource of a watched kind as a cachedResource, and hands anything else
// to the other transform.
func TestCacheTransform(t *testing.T) {
	w := watches.Watch{Group: "example.com", Version: "v1", Kind: "Web"}
	passed := 0
	tr := CacheTransform([]watches.Watch{w}, func(o any) (any, error) { passed++; return o, nil })
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Web", "metadata": map[string]any{"name": "a"}}}
	if got, err := tr(u); err != nil {
		t.Fatal(err)
	} else if _, ok := got.(*cachedResource); !ok {
		t.Errorf("a custom resource is kept as %T", got)
	}
	other := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Other", "metadata": map[string]any{"name": "b"}}}
	if got, err := tr(other); err != nil || got != any(other) || passed != 1 {
		t.Errorf("an object of another kind: %T, %v, passed on %d times", got, err, passed)
	}
}

// TestReducerKeepsReducedObjectsAsJSON: the dependents cache keeps a
// released object reduced for its readiness as a cachedResource, and what
// the engine reads back is the reduction; an object of a kind kept whole
// is kept as decoded.
func TestReducerKeepsReducedObjectsAsJSON(t *testing.T) {
	doc := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"team-a","uid":"u-1","resourceVersion":"812","generation":4,
		"creationTimestamp":"2026-11-28T08:00:00Z","labels":{"app":"web"},"annotations":{"deployment.kubernetes.io/revision":"2"},
		"managedFields":[{"manager":"chartkeeper","operation":"Apply","apiVersion":"apps/v1","time":"2026-11-28T08:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{}}}]},
		"spec":{"replicas":3,"progressDeadlineSeconds":600,"strategy":{"type":"RollingUpdate"},"selector":{"matchLabels":{"app":"web"}},
			"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}},
		"status":{"observedGeneration":4,"replicas":3,"updatedReplicas":3,"readyReplicas":3,"availableReplicas":3,
			"conditions":[{"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"Deployment has minimum availability.","lastUpdateTime":"2026-11-28T08:01:00Z","lastTransitionTime":"2026-11-28T08:01:00Z"},
				{"type":"Progressing","status":"True","reason":"NewReplicaSetAvailable","message":"ReplicaSet \"web-7c5b\" has successfully progressed.","lastUpdateTime":"2026-11-28T08:01:00Z","lastTransitionTime":"2026-11-28T08:00:00Z"}]}}`
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatal(err)
	}
	want := readiness.Reduce(u.DeepCopy())
	kept, err := reducer(nil)(u.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	r, ok := kept.(*cachedResource)
	if !ok {
		t.Fatalf("a reduced Deployment is kept as %T", kept)
	}
	if r.GetResourceVersion() != "812" || r.GetGeneration() != 4 {
		t.Errorf("metadata as kept: resourceVersion %s, generation %d", r.GetResourceVersion(), r.GetGeneration())
	}
	got := r.DeepCopyObject().(*unstructured.Unstructured)
	if !reflect.DeepEqual(got.Object, want.Object) {
		t.Errorf("read back\n%#v\nwant the reduction\n%#v", got.Object, want.Object)
	}
	whole, err := reducer([]schema.GroupKind{{Group: "apps", Kind: "Deployment"}})(u.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := whole.(*unstructured.Unstructured); !ok || w.Object["spec"].(map[string]any)["template"] == nil {
		t.Errorf("a Deployment of a kind kept whole is kept as %T, without its template", whole)
	}
}

// TestUndecodableCachedResourceIsMarked: a cached resource whose JSON does
// not decode reads back marked, for the reconciler to stop at.
func TestUndecodableCachedResourceIsMarked(t *testing.T) {
	// (A block that does not decode is an error of Unpack's too, as
	// package dictpack's tests show: the same path as JSON that does not.)
	for name, rest := range map[string]dictpack.Packed{
		"not JSON": dictpack.Raw([]byte("{not json")),
	} {
		r := &cachedResource{rest: rest}
		r.SetName("broken")
		u := r.DeepCopyObject().(*unstructured.Unstructured)
		if _, ok := u.Object[cacheDecodeError]; !ok || u.GetName() != "broken" {
			t.Errorf("%s: read back %v", name, u.Object)
		}
	}
}

// testCacheKeepsResourcesAsJSON: on a real API server, the manager cache
// set up as the operator's (CacheByObject) holds custom resources as
// cachedResource, and what the reconciler reads from it is the resource in
// full: it reconciles to Ready, and a spec read back equals the one
// written.
func (e *env) testCacheKeepsResourcesAsJSON(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{})
	f.setup(t)
	f.start(t)
	const name = "kept-as-json"
	note := f.note(name, map[string]string{"tier": "web"})
	if err := unstructured.SetNestedField(note.Object, "bonjour", "spec", "greeting"); err != nil {
		t.Fatal(err)
	}
	f.create(t, note)
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error { return f.ready(ctx, name) })

	cr := &unstructured.Unstructured{}
	cr.SetGroupVersionKind(f.target.Watch.GroupVersionKind())
	inf, err := f.mgr.GetCache().GetInformer(context.Background(), cr)
	if err != nil {
		t.Fatal(err)
	}
	kept := make(chan any, 1)
	reg, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		select {
		case kept <- o:
		default:
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	select {
	case o := <-kept:
		if _, ok := o.(*cachedResource); !ok {
			t.Errorf("the cache holds a custom resource as %T", o)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the cache replayed no custom resource")
	}

	// The cache follows the API server a moment behind: the resource read
	// from it reaches Ready True once its watch has seen the status write.
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
		got := &unstructured.Unstructured{}
		got.SetGroupVersionKind(f.target.Watch.GroupVersionKind())
		if err := f.mgr.GetClient().Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, got); err != nil {
			return err
		}
		if g, _, _ := unstructured.NestedString(got.Object, "spec", "greeting"); g != "bonjour" || got.GetLabels()["tier"] != "web" {
			return fmt.Errorf("read from the cache: greeting %q, labels %v", g, got.GetLabels())
		}
		st, err := api.StatusOf(got)
		if err != nil {
			return err
		}
		if c := meta.FindStatusCondition(st.Conditions, api.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
			return fmt.Errorf("read from the cache, the status has no Ready True: %+v", c)
		}
		return nil
	})
}
