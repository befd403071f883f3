package helm

import (
	"sync"

	"helm.sh/helm/v3/pkg/kube"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
)

// deleteTogether deletes a release's objects, every kind at once.
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
// Each kind is deleted by Helm's own code (its propagation, its NotFound
// taken as deleted), in a goroutine of its own. Helm's contract is kept:
// with any error, no result and every error; else the deleted objects, in
// the order they were given. CRDs are never deleted (see crds.go).
func deleteTogether(c *kube.Client, rl kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	kinds := byKind(rl)
	if len(kinds) < 2 {
		return c.DeleteWithPropagationPolicy(rl, policy)
	}
	errs := make([][]error, len(kinds))
	var wg sync.WaitGroup
	for i, kind := range kinds {
		wg.Go(func() {
			_, errs[i] = c.DeleteWithPropagationPolicy(kind, policy)
		})
	}
	wg.Wait()
	var all []error
	for _, e := range errs {
		all = append(all, e...)
	}
	if len(all) > 0 {
		return nil, all
	}
	return &kube.Result{Deleted: rl}, nil
}

// byKind splits a resource list by kind, each kind's objects in the order
// given.
func byKind(rl kube.ResourceList) []kube.ResourceList {
	var out []kube.ResourceList
	index := map[string]int{}
	for _, info := range rl {
		k := kindOf(info)
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], info)
	}
	return out
}

func kindOf(info *resource.Info) string {
	return info.Object.GetObjectKind().GroupVersionKind().GroupKind().String()
}
