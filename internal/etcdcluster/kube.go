package etcdcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// setName is the chart's etcd.name: the release name cut to 50 characters.
func setName(release string) string {
	if len(release) > 50 {
		release = release[:50]
	}
	return strings.TrimSuffix(release, "-")
}

// selector matches the chart's Pods and, through the StatefulSet's
// selector labels, their PVCs.
func selector(release string) client.MatchingLabels {
	return client.MatchingLabels{"app.kubernetes.io/name": "etcd", "app.kubernetes.io/instance": release}
}

// volumeName is the PVC of ordinal i (volumeClaimTemplates "data").
func volumeName(set string, i int) string { return fmt.Sprintf("data-%s-%d", set, i) }

// observeSet reads the StatefulSet, its Pods and its PVCs (nil before the
// first install).
func observeSet(ctx context.Context, c client.Client, ns, release string) (*Set, error) {
	name := setName(release)
	var sts appsv1.StatefulSet
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &sts); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading StatefulSet %s: %w", name, err)
	}
	set := &Set{Version: sts.Labels["app.kubernetes.io/version"]}
	if sts.Spec.Replicas != nil {
		set.Replicas = int(*sts.Spec.Replicas)
	}
	if ru := sts.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		set.Partition = int(*ru.Partition)
	}
	set.Pods = make([]Pod, set.Replicas)
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), selector(release)); err != nil {
		return nil, fmt.Errorf("listing Pods: %w", err)
	}
	for _, p := range pods.Items {
		i := suffixOrdinal(name, p.Name)
		if i < 0 || i >= set.Replicas || p.DeletionTimestamp != nil {
			continue
		}
		set.Pods[i].Exists = true
		set.Pods[i].Updated = sts.Status.UpdateRevision != "" && p.Labels[appsv1.ControllerRevisionHashLabelKey] == sts.Status.UpdateRevision
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
				set.Pods[i].Ready = true
			}
		}
	}
	var pvcs corev1.PersistentVolumeClaimList
	if err := c.List(ctx, &pvcs, client.InNamespace(ns), selector(release)); err != nil {
		return nil, fmt.Errorf("listing PersistentVolumeClaims: %w", err)
	}
	for _, pvc := range pvcs.Items {
		i := suffixOrdinal("data-"+name, pvc.Name)
		if i < 0 || i >= set.Replicas || pvc.DeletionTimestamp != nil {
			continue
		}
		set.Pods[i].Volume = string(pvc.UID)
	}
	return set, nil
}

func suffixOrdinal(base, name string) int {
	rest, ok := strings.CutPrefix(name, base+"-")
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 {
		return -1
	}
	return i
}

// deleteVolume deletes the PVC of ordinal i and then its Pod (which keeps
// the claim until it goes), so the StatefulSet makes both anew and the
// member added there starts empty.
func deleteVolume(c client.Client, ns, release string) func(context.Context, int) error {
	return func(ctx context.Context, i int) error {
		pvc := &corev1.PersistentVolumeClaim{}
		pvc.Namespace, pvc.Name = ns, volumeName(setName(release), i)
		pod := &corev1.Pod{}
		pod.Namespace, pod.Name = ns, fmt.Sprintf("%s-%d", setName(release), i)
		for _, obj := range []client.Object{pvc, pod} {
			if err := c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
		return nil
	}
}

// clientTLS reads the client certificate the TLS hook issued
// (<release>-tls-client).
func clientTLS(ctx context.Context, c client.Client, ns, release string) (*tls.Config, error) {
	name := release + "-tls-client"
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		return nil, fmt.Errorf("client certificate Secret %s (enable hooks.tls.client for this watch): %w", name, err)
	}
	pair, err := tls.X509KeyPair(s.Data[corev1.TLSCertKey], s.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return nil, fmt.Errorf("client certificate Secret %s: %w", name, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.Data["ca.crt"]) {
		return nil, fmt.Errorf("client certificate Secret %s: no CA certificate in ca.crt", name)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// s3Credentials reads accessKeyID and secretAccessKey from a Secret.
func s3Credentials(ctx context.Context, c client.Client, ns, name string) (string, string, error) {
	if name == "" {
		return "", "", fmt.Errorf("s3.credentialsSecret is not set")
	}
	var s corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &s); err != nil {
		return "", "", fmt.Errorf("S3 credentials Secret %s: %w", name, err)
	}
	ak, sk := string(s.Data["accessKeyID"]), string(s.Data["secretAccessKey"])
	if ak == "" || sk == "" {
		return "", "", fmt.Errorf("S3 credentials Secret %s needs the keys accessKeyID and secretAccessKey", name)
	}
	return ak, sk, nil
}
