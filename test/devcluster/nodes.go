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
	"k8s.io/client-go/kubernetes"
)

const (
	kwokNodeAnnotation = "kwok.x-k8s.io/node"
	// StorageClassName is the default StorageClass; kwok binds its claims at once.
	StorageClassName = "kwok-volume"
)

// NodeName returns the name of the i-th fake node.
func NodeName(i int) string { return "kwok-node-" + strconv.Itoa(i) }

func fakeNode(name string, pods int) *corev1.Node {
	res := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   *resource.NewQuantity(int64(pods), resource.DecimalSI),
	}
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
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res, Phase: corev1.NodeRunning},
	}
}

// ensureObjects registers the fake nodes and the default StorageClass; both
// are left as they are when they exist.
func (c *Cluster) ensureObjects(ctx context.Context, cs kubernetes.Interface) error {
	for i := range c.cfg.Nodes {
		_, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(NodeName(i), c.cfg.PodsPerNode), metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
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
