package bench

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestRolledOut(t *testing.T) {
	deployment := func(replicas *int32, message string, generation, observed int64, status appsv1.DeploymentStatus) *appsv1.Deployment {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Generation: generation}, Status: status}
		d.Spec.Replicas = replicas
		d.Spec.Template.Annotations = map[string]string{messageAnnotation: message}
		d.Status.ObservedGeneration = observed
		return d
	}
	one := appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1}
	// Every case asks whether message v2 rolled out.
	for _, c := range []struct {
		name string
		d    *appsv1.Deployment
		want bool
	}{
		{"1 replica rolled out", deployment(ptr.To[int32](1), "v2", 2, 2, one), true},
		{"replicas unset means 1", deployment(nil, "v2", 2, 2, one), true},
		{"old message", deployment(ptr.To[int32](1), "v1", 2, 2, one), false},
		{"generation not seen yet", deployment(ptr.To[int32](1), "v2", 3, 2, one), false},
		{"an old replica left", deployment(ptr.To[int32](1), "v2", 2, 2, appsv1.DeploymentStatus{Replicas: 2, UpdatedReplicas: 1, ReadyReplicas: 2, AvailableReplicas: 2}), false},
		{"not available yet", deployment(ptr.To[int32](1), "v2", 2, 2, appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1}), false},
		// Scaled to 0 (podinfo): the controller has seen the generation
		// with the message, and there is no replica of any kind.
		{"0 replicas, seen", deployment(ptr.To[int32](0), "v2", 2, 2, appsv1.DeploymentStatus{}), true},
		{"0 replicas, just created", deployment(ptr.To[int32](0), "v2", 1, 0, appsv1.DeploymentStatus{}), false},
		{"0 replicas, upgrade not seen", deployment(ptr.To[int32](0), "v2", 2, 1, appsv1.DeploymentStatus{}), false},
		{"0 replicas, old message", deployment(ptr.To[int32](0), "v1", 2, 2, appsv1.DeploymentStatus{}), false},
		{"0 replicas, one still terminating", deployment(ptr.To[int32](0), "v2", 2, 2, appsv1.DeploymentStatus{Replicas: 1}), false},
	} {
		if got := rolledOut(c.d, "v2"); got != c.want {
			t.Errorf("%s: rolledOut = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestObjectsAreIndexedByRelease(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{byRelease: labelIndex(releaseLabel)})
	for _, o := range []*metav1.PartialObjectMetadata{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bench-0001-podinfo", Labels: map[string]string{releaseLabel: "bench-0001"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bench-0001-other", Labels: map[string]string{releaseLabel: "bench-0001"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "bench-0001-podinfo", Labels: map[string]string{releaseLabel: "bench-0001"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unlabelled"}},
	} {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := idx.ByIndex(byRelease, "ns/bench-0001")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.(*metav1.PartialObjectMetadata).Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"bench-0001-other", "bench-0001-podinfo"}) {
		t.Fatalf("objects of ns/bench-0001: %v", names)
	}
}
