package devcluster

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	// StorageClassName is the default StorageClass; kwok binds its claims at once.
	StorageClassName = "kwok-volume"
)

// NodeName returns the name of the i-th fake node.
func NodeName(i int) string { return "kwok-node-" + strconv.Itoa(i) }

// What each fake node advertises besides its pods (docs/local-cluster.md):
// a large machine's cpu and memory, and the ephemeral-storage a kubelet
// reports for its root filesystem (charts' resource presets request some,
// and the scheduler places no such Pod on a node that reports none). Of a
// 1 TiB disk, allocatable keeps back the 10% the kubelet's default hard
// eviction threshold (nodefs.available<10%) holds.
var (
	nodeCPU                  = resource.MustParse("64")
	nodeMemory               = resource.MustParse("512Gi")
	nodeEphemeral            = resource.MustParse("1Ti")
	nodeEphemeralAllocatable = resource.MustParse("921Gi")
)

func fakeNode(name string, pods int) *corev1.Node {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              nodeCPU,
		corev1.ResourceMemory:           nodeMemory,
		corev1.ResourcePods:             *resource.NewQuantity(int64(pods), resource.DecimalSI),
		corev1.ResourceEphemeralStorage: nodeEphemeral,
	}
	allocatable := capacity.DeepCopy()
	allocatable[corev1.ResourceEphemeralStorage] = nodeEphemeralAllocatable
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Annotations: map[string]string{
				kwokNodeAnnotation:             "fake",
				"node.alpha.kubernetes.io/ttl": "0",
			},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: allocatable, Phase: corev1.NodeRunning},
	}
}

// ensureObjects registers the fake nodes and the default StorageClass; both
// are left as they are when they exist, except that a node registered
// before the nodes advertised ephemeral-storage is given it.
func (c *Cluster) ensureObjects(ctx context.Context, cs kubernetes.Interface) error {
	for i := range c.cfg.Nodes {
		_, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(NodeName(i), c.cfg.PodsPerNode), metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			err = ensureEphemeralStorage(ctx, cs, NodeName(i))
		}
		if err != nil {
			return fmt.Errorf("registering node %s: %w", NodeName(i), err)
		}
	}
	bind := storagev1.VolumeBindingImmediate
	reclaim := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        StorageClassName,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kwok.x-k8s.io/volume",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &bind,
	}
	if _, err := cs.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass: %w", err)
	}
	return nil
}

// ensureEphemeralStorage adds ephemeral-storage to the capacity and
// allocatable of a node that reports none (registered by an older
// devcluster); kwok's node stages keep what the status holds.
func ensureEphemeralStorage(ctx context.Context, cs kubernetes.Interface, name string) error {
	n, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	if _, ok := n.Status.Allocatable[corev1.ResourceEphemeralStorage]; ok {
		return nil
	}
	patch := fmt.Sprintf(`{"status":{"capacity":{"ephemeral-storage":%q},"allocatable":{"ephemeral-storage":%q}}}`,
		nodeEphemeral.String(), nodeEphemeralAllocatable.String())
	_, err = cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	return err
}

// controllersWork succeeds once every fake node is Ready (kwok works) and the
// default ServiceAccount exists (the controller-manager works).
func (c *Cluster) controllersWork(ctx context.Context, cs kubernetes.Interface) error {
	for i := range c.cfg.Nodes {
		n, err := cs.CoreV1().Nodes().Get(ctx, NodeName(i), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !nodeReady(n) {
			return fmt.Errorf("node %s is not Ready yet", n.Name)
		}
	}
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return fmt.Errorf("the default ServiceAccount is not there yet: %w", err)
	}
	return nil
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitInterval is how often start-up checks are repeated.
const waitInterval = 200 * time.Millisecond
