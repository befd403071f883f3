package kubeops

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// InstallCRD creates or replaces the CRD and waits until it is served.
func InstallCRD(ctx context.Context, admin *rest.Config, crd *apiextv1.CustomResourceDefinition) error {
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
	return WaitFor(ctx, time.Minute, "CRD "+crd.Name+" established", func(ctx context.Context) (bool, error) {
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

// CreateNamespaces creates the namespaces (existing ones are kept).
func CreateNamespaces(ctx context.Context, cs kubernetes.Interface, names []string) error {
	for _, n := range names {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	return nil
}

// DeleteNamespaces deletes the namespaces and waits until they are gone.
func DeleteNamespaces(ctx context.Context, cs kubernetes.Interface, names []string, timeout time.Duration) error {
	for _, n := range names {
		if err := cs.CoreV1().Namespaces().Delete(ctx, n, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return WaitFor(ctx, timeout, "namespaces deleted", func(ctx context.Context) (bool, error) {
		for _, n := range names {
			if _, err := cs.CoreV1().Namespaces().Get(ctx, n, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
}

// WaitFor polls cond every 200ms until it holds, fails, or timeout passes.
func WaitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) (bool, error)) error {
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
