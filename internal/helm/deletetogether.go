package helm

import (
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/util/retry"
)

// deleteTogether deletes a release's objects, every kind at once, and
// tells told of each object whether the API server's answer said it is
// gone (see answeredGone).
//
// Helm deletes the objects of one kind together and the kinds one after
// another, in its uninstall order: a Service's DELETE waits for the
// Deployments'. That order is only the order the requests are sent in.
// Helm waits for each DELETE's answer, not for the object to go (its
// finalizers, its Pods' graceful termination), so every object of the
// release is marked for deletion within the same few milliseconds either
// way: the order promised nothing a controller in the cluster could wait
// on. What it cost was one round trip to the API server per kind, in
// every uninstall (make bench BENCH_CONCURRENCY=1: 23 ms an uninstall of
// three kinds, 18 ms with the kinds at once).
//
// Each object is deleted as Helm's own code does (its propagation, a
// retry on conflict, NotFound taken as deleted). Helm's contract is kept:
// with any error, no result and every error; else the deleted objects, in
// the order they were given. CRDs are never deleted (see crds.go).
func deleteTogether(c *kube.Client, rl kube.ResourceList, policy metav1.DeletionPropagation, told func(*resource.Info, bool)) (*kube.Result, []error) {
	if len(rl) == 0 {
		return c.DeleteWithPropagationPolicy(rl, policy) // Helm's answer to nothing to delete
	}
	errs := make([]error, len(rl))
	var wg sync.WaitGroup
	for i, info := range rl {
		wg.Go(func() {
			c.Log("Starting delete for %q %s", info.Name, info.Mapping.GroupVersionKind.Kind)
			gone, err := deleteObject(info, policy)
			switch {
			case apierrors.IsNotFound(err):
				c.Log("Ignoring delete failure for %q %s: %v", info.Name, info.Mapping.GroupVersionKind, err)
				gone, err = true, nil
			case err != nil:
				errs[i] = err
				return
			}
			if told != nil {
				told(info, gone)
			}
		})
	}
	wg.Wait()
	var all []error
	for _, err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	if len(all) > 0 {
		return nil, all
	}
	return &kube.Result{Deleted: rl}, nil
}

// deleteObject is Helm's deleteResource, which drops the API server's
// answer; this reads it: whether the object is gone.
func deleteObject(info *resource.Info, policy metav1.DeletionPropagation) (gone bool, err error) {
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := resource.NewHelper(info.Client, info.Mapping).DeleteWithOptions(info.Namespace, info.Name, &metav1.DeleteOptions{PropagationPolicy: &policy})
		if err == nil {
			gone = answeredGone(obj)
		}
		return err
	})
	return gone, err
}

// answeredGone reports whether a DELETE's answer says the object is gone:
// the API server answers a deletion it made at once with a Status (or, for
// a few kinds, the object as it was), and one it only marked (finalizers
// to run, graceful termination) with the object and its
// deletionTimestamp.
func answeredGone(obj runtime.Object) bool {
	if obj == nil {
		return false
	}
	if _, ok := obj.(*metav1.Status); ok {
		return true
	}
	if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Group == "" && gvk.Kind == "Status" {
		return true // decoded as unstructured (a custom kind named Status has a group)
	}
	m, err := meta.Accessor(obj)
	return err == nil && m.GetDeletionTimestamp() == nil
}
