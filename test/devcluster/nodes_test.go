package devcluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// A fake node advertises what a kubelet's does: cpu, memory, pods and
// ephemeral-storage, each allocatable no more than its capacity.
func TestFakeNodeAdvertisesEphemeralStorage(t *testing.T) {
	n := fakeNode("kwok-node-0", 110)
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods, corev1.ResourceEphemeralStorage} {
		c, okc := n.Status.Capacity[r]
		a, oka := n.Status.Allocatable[r]
		if !okc || !oka || a.IsZero() || a.Cmp(c) > 0 {
			t.Errorf("%s: capacity %v (%v), allocatable %v (%v)", r, c.String(), okc, a.String(), oka)
		}
	}
	if got := n.Status.Allocatable[corev1.ResourcePods]; got.Value() != 110 {
		t.Errorf("pods %s, want 110", got.String())
	}
	// Room for a thousand Pods of the largest preset request public charts use.
	if got, want := n.Status.Allocatable[corev1.ResourceEphemeralStorage], resource.MustParse("200Gi"); got.Cmp(want) < 0 {
		t.Errorf("ephemeral-storage allocatable %s, want at least %s", got.String(), want.String())
	}
}

// A node registered by an older devcluster, without ephemeral-storage, is
// given it on the next up; one that has it is left as it is.
func TestEnsureEphemeralStorage(t *testing.T) {
	old := fakeNode("kwok-node-0", 10)
	delete(old.Status.Capacity, corev1.ResourceEphemeralStorage)
	delete(old.Status.Allocatable, corev1.ResourceEphemeralStorage)
	own := fakeNode("kwok-node-1", 10)
	own.Status.Allocatable[corev1.ResourceEphemeralStorage] = resource.MustParse("7Gi")
	cs := fake.NewClientset(old, own)
	ctx := context.Background()
	for _, name := range []string{"kwok-node-0", "kwok-node-1"} {
		if err := ensureEphemeralStorage(ctx, cs, name); err != nil {
			t.Fatal(err)
		}
	}
	n, err := cs.CoreV1().Nodes().Get(ctx, "kwok-node-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, a := n.Status.Capacity[corev1.ResourceEphemeralStorage], n.Status.Allocatable[corev1.ResourceEphemeralStorage]; c.Cmp(nodeEphemeral) != 0 || a.Cmp(nodeEphemeralAllocatable) != 0 {
		t.Errorf("old node: capacity %s, allocatable %s", c.String(), a.String())
	}
	if c := n.Status.Capacity[corev1.ResourceCPU]; c.Cmp(nodeCPU) != 0 {
		t.Errorf("old node lost its cpu: %s", c.String())
	}
	n, err = cs.CoreV1().Nodes().Get(ctx, "kwok-node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := n.Status.Allocatable[corev1.ResourceEphemeralStorage]; a.String() != "7Gi" {
		t.Errorf("a node that had ephemeral-storage was changed: %s", a.String())
	}
}
