package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// The benchmark's kind.
var benchGVK = schema.GroupVersionKind{Group: "bench.chartkeeper.dev", Version: "v1", Kind: "Bench"}

// writeWatches writes the watches.yaml every operator subject is given and
// loads it back.
func writeWatches(dir, chartDir string, concurrency int) (string, watches.Watch, error) {
	path := filepath.Join(dir, "watches.yaml")
	body := fmt.Sprintf(`# The benchmark's watches.yaml: every operator subject gets this file.
- group: %s
  version: %s
  kind: %s
  chart: %s
  maxConcurrentReconciles: %d
`, benchGVK.Group, benchGVK.Version, benchGVK.Kind, chartDir, concurrency)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		return "", watches.Watch{}, err
	}
	ws, err := watches.Load(path)
	if err != nil {
		return "", watches.Watch{}, err
	}
	return path, ws[0], nil
}

// benchCRD is the CRD make manifests would write for the watch, with a
// status that keeps any field: every operator writes a status of its own
// shape, and none should fail on the benchmark's schema.
func benchCRD(w watches.Watch) (*apiextv1.CustomResourceDefinition, error) {
	crd, _, err := manifests.CRD(w, nil, manifests.CRDOptions{})
	if err != nil {
		return nil, err
	}
	for i := range crd.Spec.Versions {
		s := crd.Spec.Versions[i].Schema.OpenAPIV3Schema
		s.Properties["status"] = apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
		crd.Spec.Versions[i].AdditionalPrinterColumns = nil
	}
	return crd, nil
}

// installCRD creates or replaces the CRD and waits until it is served.
func installCRD(ctx context.Context, admin *rest.Config, crd *apiextv1.CustomResourceDefinition) error {
	c, err := apiextclient.NewForConfig(admin)
	if err != nil {
		return err
	}
	crds := c.ApiextensionsV1().CustomResourceDefinitions()
	old, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
	case err == nil:
		crd.ResourceVersion = old.ResourceVersion
		_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("installing the CRD %s: %w", crd.Name, err)
	}
	return waitFor(ctx, time.Minute, "CRD "+crd.Name+" established", func(ctx context.Context) (bool, error) {
		got, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextv1.Established && c.Status == apiextv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// createNamespaces creates the namespaces (existing ones are kept).
func createNamespaces(ctx context.Context, cs kubernetes.Interface, names []string) error {
	for _, n := range names {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// deleteNamespaces deletes the namespaces and waits until they are gone,
// so that the next subject starts on a cluster as empty as the first.
func deleteNamespaces(ctx context.Context, cs kubernetes.Interface, names []string, timeout time.Duration) error {
	for _, n := range names {
		if err := cs.CoreV1().Namespaces().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return waitFor(ctx, timeout, "namespaces deleted", func(ctx context.Context) (bool, error) {
		for _, n := range names {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
}

// waitFor polls cond every 200ms until it holds, fails, or timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		ok, err := cond(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: not within %s", what, timeout)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
