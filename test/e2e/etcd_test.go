package e2e

import (
	"context"
	"fmt"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var etcdGVK = schema.GroupVersionKind{Group: "apps.chartkeeper.dev", Version: "v1alpha1", Kind: "EtcdCluster"}

// The EtcdCluster sample: StatefulSet, Services, TLS Secrets and PDB as
// specified, Ready when the StatefulSet is; a size the chart refuses stalls
// with a clear condition and leaves the running cluster alone.
func TestEtcdClusterSample(t *testing.T) {
	parallel(t, 30*time.Second)
	env, ns := bundledFixture(t)
	ctx := context.Background()

	sample := &unstructured.Unstructured{}
	raw := readFile(t, filepath.Join(testenv.RepoRoot(), "config", "samples", "apps_v1alpha1_etcdcluster.yaml"))
	if err := yaml.Unmarshal(raw, &sample.Object); err != nil {
		t.Fatal(err)
	}
	sample.SetNamespace(ns)
	if err := env.Client.Create(ctx, sample); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.Client.Delete(context.Background(), sample)
		testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
			if err := env.Client.Get(ctx, client.ObjectKeyFromObject(sample), &unstructured.Unstructured{Object: map[string]any{"apiVersion": etcdGVK.GroupVersion().String(), "kind": etcdGVK.Kind}}); err == nil {
				return fmt.Errorf("EtcdCluster still there")
			}
			return nil
		})
	})

	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, etcdGVK, ns, sample.GetName())
		if err != nil {
			return err
		}

		if c := condition(s, api.ConditionReady); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not ready: %+v", s.Conditions)
		}
		return nil
	})
	sts := &appsv1.StatefulSet{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "etcd-sample"}, sts); err != nil {
		t.Fatal(err)
	}
	if *sts.Spec.Replicas != 3 || sts.Status.ReadyReplicas != 3 || sts.Spec.ServiceName != "etcd-sample-headless" {
		t.Errorf("statefulset: replicas %d ready %d service %s", *sts.Spec.Replicas, sts.Status.ReadyReplicas, sts.Spec.ServiceName)
	}
	args := strings.Join(sts.Spec.Template.Spec.Containers[0].Command, " ")
	for _, want := range []string{"--cert-file=", "--peer-cert-file=", "--client-cert-auth=true", "--initial-advertise-peer-urls=https://$(POD_NAME).etcd-sample-headless.$(POD_NAMESPACE).svc:2380"} {
		if !strings.Contains(args, want) {
			t.Errorf("etcd command lacks %q: %s", want, args)
		}
	}
	if p := sts.Spec.PersistentVolumeClaimRetentionPolicy; p == nil || p.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		t.Errorf("PVC retention policy %+v: a removed member's volume must go", p)
	}
	// The membership a starting member joins, kept by the etcd hook.
	cm := &corev1.ConfigMap{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "etcd-sample-members"}, cm); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if want := fmt.Sprintf("etcd-sample-%d=https://etcd-sample-%d.etcd-sample-headless.%s.svc:2380", i, i, ns); !strings.Contains(cm.Data["ETCD_INITIAL_CLUSTER"], want) {
			t.Errorf("ETCD_INITIAL_CLUSTER %q lacks %s", cm.Data["ETCD_INITIAL_CLUSTER"], want)
		}
	}
	for _, name := range []string{"etcd-sample", "etcd-sample-headless"} {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &corev1.Service{}); err != nil {
			t.Errorf("Service %s: %v", name, err)
		}
	}
	for _, name := range []string{"etcd-sample-ca", "etcd-sample-tls-server", "etcd-sample-tls-peer", "etcd-sample-tls-client"} {
		readSecret(t, env, ns, name)
	}
	pdb := &policyv1.PodDisruptionBudget{}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "etcd-sample"}, pdb); err != nil || pdb.Spec.MinAvailable.IntValue() != 2 {
		t.Errorf("PDB minAvailable %v (err %v), want 2", pdb.Spec.MinAvailable, err)
	}
	var pvcs corev1.PersistentVolumeClaimList
	if err := env.Client.List(ctx, &pvcs, client.InNamespace(ns)); err != nil || len(pvcs.Items) != 3 {
		t.Errorf("%d volume claims (err %v), want 3", len(pvcs.Items), err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, etcdGVK, ns, sample.GetName())
		if err != nil {
			return err
		}
		// kwok Pods run no etcd: the hook says it cannot see etcd, and
		// nothing it would need etcd for is pending.
		if s.App["readyMembers"] != int64(3) || s.App["health"] != "Unknown" || s.App["phase"] != "Unknown" ||
			!strings.Contains(fmt.Sprint(s.App["message"]), "etcd does not answer") {
			return fmt.Errorf("status.app %v", s.App)
		}
		return nil
	})

	// A valid scale needs etcd (members are added through its API before
	// their Pods start): without it the change is held and reported.
	gen := sts.Generation
	if err := env.Client.Patch(ctx, sample, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":5}}`))); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, etcdGVK, ns, sample.GetName())
		if err != nil {
			return err
		}
		c := condition(s, api.ConditionReady)
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonHookFailed) || !strings.Contains(c.Message, "scaling from 3 to 5 members needs the etcd API") {
			return fmt.Errorf("Ready %+v", c)
		}
		if s.App["phase"] != "Halted" {
			return fmt.Errorf("status.app %v", s.App)
		}
		return nil
	})
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "etcd-sample"}, sts); err != nil || sts.Generation != gen || *sts.Spec.Replicas != 3 {
		t.Errorf("the StatefulSet was touched while etcd could not be asked: generation %d -> %d, replicas %d (err %v)", gen, sts.Generation, *sts.Spec.Replicas, err)
	}

	// Specs the chart's schema refuses are refused by the API server (the
	// CRD's schema comes from the chart's), naming the field, and nothing
	// is touched.
	for _, bad := range []struct{ patch, msg string }{
		{`{"spec":{"size":4,"version":"3.6.16"}}`, "spec.size"},
		{`{"spec":{"size":3,"version":"3.6"}}`, "spec.version"},
	} {
		err := env.Client.Patch(ctx, sample, client.RawPatch(types.MergePatchType, []byte(bad.patch)))
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s was not refused naming %s: %v", bad.patch, bad.msg, err)
		}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "etcd-sample"}, sts); err != nil || sts.Generation != gen {
			t.Errorf("the StatefulSet was touched: generation %d -> %d (err %v)", gen, sts.Generation, err)
		}
	}
}
