package bench

import (
	"context"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// writers is how many requests the harness itself has in flight when it
// creates, changes or deletes the custom resources.
const writers = 32

// forEach calls fn for every key from a bounded pool of goroutines and
// returns the first error; the others stop taking keys after it.
func forEach(ctx context.Context, keys []key, workers int, fn func(context.Context, key) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ch := make(chan key)
	var wg sync.WaitGroup
	for range min(workers, len(keys)) {
		wg.Go(func() {
			for k := range ch {
				if ctx.Err() != nil {
					continue // drain: the pool stops at the first error
				}
				if err := fn(ctx, k); err != nil {
					cancel(fmt.Errorf("%s: %w", k, err))
				}
			}
		})
	}
feed:
	for _, k := range keys {
		if ctx.Err() != nil {
			break // select alone picks at random when both cases are ready
		}
		select {
		case ch <- k:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	return context.Cause(ctx)
}

// crs changes the benchmark's custom resources as the cluster admin; its
// methods take the benchmark's keys, as forEach hands them to a phase.
type crs struct{ kubeops.CustomResources }

func (c crs) create(ctx context.Context, k key, spec map[string]any) error {
	return c.Create(ctx, types.NamespacedName(k), spec)
}

func (c crs) patchSpec(ctx context.Context, k key, spec map[string]any) error {
	return c.PatchSpec(ctx, types.NamespacedName(k), spec)
}

func (c crs) delete(ctx context.Context, k key) error {
	return c.Delete(ctx, types.NamespacedName(k))
}

// dropFinalizers removes the finalizers of every custom resource left in
// the namespaces.
func (c crs) dropFinalizers(ctx context.Context, namespaces []string) error {
	for _, ns := range namespaces {
		list, err := c.Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, u := range list.Items {
			if len(u.GetFinalizers()) == 0 {
				continue
			}
			_, err := c.Namespace(ns).Patch(ctx, u.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}
