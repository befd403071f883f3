package readiness

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil { // integers as int64, as from the API
		t.Fatal(err)
	}
	return u
}

func TestCompute(t *testing.T) {
	available := obj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 2}
status:
  observedGeneration: 2
  replicas: 2
  updatedReplicas: 2
  readyReplicas: 2
  availableReplicas: 2
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
`)
	rolling := obj(t, `apiVersion: apps/v1
kind: Deployment
metadata: {name: slow, generation: 3}
spec: {replicas: 2}
status: {observedGeneration: 2, replicas: 2}
`)
	cm := obj(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\n")

	if r := Compute([]*unstructured.Unstructured{available, cm}); !r.Ready || len(r.NotReady) != 0 || r.Message() != "all released objects are ready" {
		t.Errorf("ready set: %+v", r)
	}
	r := Compute([]*unstructured.Unstructured{available, rolling, cm})
	if r.Ready || len(r.NotReady) != 1 || !strings.HasPrefix(r.NotReady[0], "Deployment slow: InProgress") {
		t.Errorf("rolling set: %+v", r)
	}
	if !strings.Contains(r.Message(), "Deployment slow") {
		t.Errorf("message %q", r.Message())
	}
}

func TestNeedsStatus(t *testing.T) {
	if NeedsStatus(schema.GroupKind{Kind: "ConfigMap"}) || !NeedsStatus(schema.GroupKind{Group: "apps", Kind: "Deployment"}) || !NeedsStatus(schema.GroupKind{Group: "example.com", Kind: "Database"}) {
		t.Error("NeedsStatus misclassifies")
	}
}

func TestNeedsStatusOf(t *testing.T) {
	svc := func(typ string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{}}}
		if typ != "" {
			u.Object["spec"].(map[string]any)["type"] = typ
		}
		return u
	}
	obj := func(apiVersion, kind string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	}
	cases := []struct {
		name string
		obj  *unstructured.Unstructured
		want bool
	}{
		{"ClusterIP by default", svc(""), false},
		{"NodePort", svc("NodePort"), false},
		{"LoadBalancer waits for its IP", svc("LoadBalancer"), true},
		{"Deployment", obj("apps/v1", "Deployment"), true},
		{"ConfigMap", obj("v1", "ConfigMap"), false},
		{"a Service of another group", obj("example.com/v1", "Service"), true},
	}
	for _, c := range cases {
		if got := NeedsStatusOf(c.obj); got != c.want {
			t.Errorf("%s: NeedsStatusOf = %v, want %v", c.name, got, c.want)
		}
	}
}
