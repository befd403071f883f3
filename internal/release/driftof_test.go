package release

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// racingClient plays a Deployment's controller that writes the object
// between the operator's read of it and the dry run: after each of the
// first races Gets, the stored version moves on (its status, and its
// revision annotation when annotate is set). The dry run answers with the
// version stored when it runs, as the API server's does.
type racingClient struct {
	client.Client // nil: other calls panic
	version       int
	races         int
	annotate      bool
	replicas      int64 // 0: the released 2
	gets          int
}

func (c *racingClient) stored() map[string]any {
	meta := map[string]any{"name": "web", "namespace": "ns", "resourceVersion": strconv.Itoa(c.version)}
	if c.annotate {
		meta["annotations"] = map[string]any{"deployment.kubernetes.io/revision": strconv.Itoa(c.version)}
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
		"spec":   map[string]any{"replicas": c.liveReplicas()},
		"status": map[string]any{"observedGeneration": int64(c.version), "replicas": int64(c.version % 3)},
	}
}

func (c *racingClient) liveReplicas() int64 {
	if c.replicas == 0 {
		return 2
	}
	return c.replicas
}

func (c *racingClient) Get(_ context.Context, _ client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	c.gets++
	obj.(*unstructured.Unstructured).SetUnstructuredContent(c.stored())
	if c.races > 0 {
		c.races--
		c.version++
	}
	return nil
}

func (c *racingClient) Apply(_ context.Context, obj runtime.ApplyConfiguration, _ ...client.ApplyOption) error {
	// The released form sets only the replicas: the dry run's answer is
	// the stored object with the released 2.
	u := c.stored()
	u["spec"] = map[string]any{"replicas": int64(2)}
	obj.(interface{ SetUnstructuredContent(map[string]any) }).SetUnstructuredContent(u)
	return nil
}

// driftOf compares the object with its released form at one version: a
// write between its read and its dry run (a controller's status update or
// annotation) is not drift, and the fields the release sets are still
// compared.
func TestDriftOfComparesOneVersion(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	released := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "ns"},
		"spec":     map[string]any{"replicas": int64(2)},
	}}
	ob, err := newObject(gvk, "ns", released)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		c        *racingClient
		wantGets int
		want     string // the drifted paths
		wantErr  string
	}{
		{"no write in between", &racingClient{version: 7}, 1, "", ""},
		{"a status write in between", &racingClient{version: 7, races: 1}, 2, "", ""},
		{"a status and annotation write in between", &racingClient{version: 7, races: 2, annotate: true}, 3, "", ""},
		{"an edit of what the release sets, and a status write", &racingClient{version: 7, races: 1, replicas: 5}, 2, "/spec/replicas", ""},
		{"writes in between every time", &racingClient{version: 7, races: 10, annotate: true}, maxDriftReads, "", "changed under each of 3 comparisons"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &Engine{live: tc.c}
			diffs, err := e.driftOf(context.Background(), ob)
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one saying %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v", err)
			case fieldList(diffs) != tc.want:
				t.Errorf("drift %+v, want %q", diffs, tc.want)
			}
			if tc.c.gets != tc.wantGets {
				t.Errorf("%d reads, want %d", tc.c.gets, tc.wantGets)
			}
		})
	}
}
