package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
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

// crs changes the benchmark's custom resources as the cluster admin.
type crs struct {
	dyn dynamic.Interface
	gvr schema.GroupVersionResource
	gvk schema.GroupVersionKind
}

func (c crs) create(ctx context.Context, k key, spec map[string]any) error {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(c.gvk)
	u.SetNamespace(k.Namespace)
	u.SetName(k.Name)
	_, err := c.dyn.Resource(c.gvr).Namespace(k.Namespace).Create(ctx, u, metav1.CreateOptions{})
	return err
}

func (c crs) patchSpec(ctx context.Context, k key, spec map[string]any) error {
	body, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	_, err = c.dyn.Resource(c.gvr).Namespace(k.Namespace).Patch(ctx, k.Name, types.MergePatchType, body, metav1.PatchOptions{})
	return err
}

func (c crs) delete(ctx context.Context, k key) error {
	err := c.dyn.Resource(c.gvr).Namespace(k.Namespace).Delete(ctx, k.Name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// dropFinalizers removes the finalizers of every custom resource left in
// the namespaces.
func (c crs) dropFinalizers(ctx context.Context, namespaces []string) error {
	for _, ns := range namespaces {
		list, err := c.dyn.Resource(c.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, u := range list.Items {
			if len(u.GetFinalizers()) == 0 {
				continue
			}
			_, err := c.dyn.Resource(c.gvr).Namespace(ns).Patch(ctx, u.GetName(), types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return err
			}
		}
	}
	return nil
}
