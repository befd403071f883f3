package devcluster_test

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/devcluster"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The scheduler, the Deployment and ReplicaSet controllers and kwok all
// work: a Deployment's Pods are scheduled, Running and Ready, and the
// Deployment becomes Available.
func TestDeploymentBecomesAvailable(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	labels := map[string]string{"app": "web"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.27"}}},
			},
		},
	}
	ctx := context.Background()
	if err := env.Client.Create(ctx, dep); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		var pods corev1.PodList
		if err := env.Client.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(labels)); err != nil {
			return err
		}
		ready := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && podReady(&p) && p.Spec.NodeName != "" {
				ready++
			}
		}
		if ready != 2 {
			return fmt.Errorf("%d of %d pods Running and Ready", ready, len(pods.Items))
		}
		return nil
	})
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		var d appsv1.Deployment
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(dep), &d); err != nil {
			return err
		}
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue && d.Status.AvailableReplicas == 2 {
				return nil
			}
		}
		return fmt.Errorf("deployment not Available: %+v", d.Status)
	})
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// A Pod that requests ephemeral-storage, as charts' resource presets do,
// is scheduled and runs: the fake nodes advertise it, as a kubelet does.
func TestPodRequestingEphemeralStorageRuns(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "scratch", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("50Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse("2Gi")},
		}}}},
	}
	if err := env.Client.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		var p corev1.Pod
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(pod), &p); err != nil {
			return err
		}
		if p.Status.Phase == corev1.PodRunning && podReady(&p) {
			return nil
		}
		return fmt.Errorf("Pod %s, conditions %+v", p.Status.Phase, p.Status.Conditions)
	})
}

// The garbage collector works: deleting an owner deletes what it owns.
func TestGarbageCollection(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	ctx := context.Background()
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	owned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "owned", Namespace: ns, OwnerReferences: []metav1.OwnerReference{{
		APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID,
	}}}}
	if err := env.Client.Create(ctx, owned); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(owned), &corev1.Secret{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("owned Secret still there (err=%v)", err)
	})
}

// Up is idempotent and restarts only dead components; Down stops exactly
// the processes Up started and nothing else.
func TestUpReuseRestartDown(t *testing.T) {
	testenv.NeedsCluster(t)
	dir := t.TempDir()
	cfg := devcluster.Config{Dir: dir, BinDir: testenv.BinDir(), Nodes: 1, Attached: true}
	t.Cleanup(func() { _ = devcluster.Down(dir, nil) })
	ctx := context.Background()

	c1, err := devcluster.Up(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first := c1.State().Procs
	c2, err := devcluster.Up(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range c2.State().Procs {
		if first[name] != p {
			t.Errorf("second Up replaced %s: %+v -> %+v", name, first[name], p)
		}
	}
	if c2.State().Ports != c1.State().Ports {
		t.Errorf("ports changed on reuse: %+v -> %+v", c1.State().Ports, c2.State().Ports)
	}

	if err := first["kwok"].Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	c3, err := devcluster.Up(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range c3.State().Procs {
		if changed := first[name] != p; changed != (name == "kwok") {
			t.Errorf("%s: changed=%v after only kwok died", name, changed)
		}
	}

	bystander := exec.Command("sleep", "60")
	if err := bystander.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bystander.Process.Kill(); _ = bystander.Wait() })

	if err := devcluster.Down(dir, nil); err != nil {
		t.Fatal(err)
	}
	for name, p := range c3.State().Procs {
		if p.Alive() {
			t.Errorf("%s (pid %d) still running after Down", name, p.PID)
		}
	}
	if err := syscall.Kill(bystander.Process.Pid, 0); err != nil {
		t.Errorf("Down stopped a process it did not start: %v", err)
	}
	sts, exists, err := devcluster.Status(ctx, dir)
	if err != nil || !exists {
		t.Fatalf("status: exists=%v err=%v", exists, err)
	}
	for _, s := range sts {
		if s.Running {
			t.Errorf("status says %s runs after Down", s.Name)
		}
	}
}
