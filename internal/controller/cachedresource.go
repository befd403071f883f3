package controller

import (
	"encoding/json"
	"fmt"
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/dictpack"
	"github.com/chartkeeper/chartkeeper/internal/intern"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// cachedResource is an object as a cache keeps it: its metadata decoded
// (the cache indexes it, the watch's predicates and selector read it),
// everything else encoded as JSON. The manager cache keeps custom
// resources so, and the dependents cache released objects reduced to what
// their readiness reads (reducer).
//
// Decoded into maps, a custom resource's spec and status took three times
// the memory of their JSON (make bench: 9 KiB for a resource of 3.8 KiB,
// the largest part of what the operator held per release). Nothing reads
// a cached resource but the reconciler, once per reconcile, and nothing
// reads a reduced object but a readiness check after it changed, so they
// are kept as JSON and decoded when read.
//
// The cache hands out copies (DeepCopyObject), and callers ask it for
// *unstructured.Unstructured: DeepCopyObject therefore returns the
// resource decoded, as an *unstructured.Unstructured, and never a
// *cachedResource; the watch's event handlers, which see the cached
// object itself, take any client.Object.
type cachedResource struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// rest is the object without its metadata, as JSON packed against
	// another object of its kind (resourceJSON); never changed once made.
	rest dictpack.Packed
}

var _ client.Object = &cachedResource{}

// resourceJSON packs the cached objects' JSON, one dictionary per kind:
// objects of one kind repeat each other's field names, condition types,
// reasons and messages, chart name and inventory kinds, and a bench-shaped
// custom resource keeps under a quarter of its JSON (package dictpack).
// Unpacking one costs a fraction of decoding its JSON, which every read
// does anyway.
var resourceJSON dictpack.Families[schema.GroupVersionKind]

// newCachedResource makes a cachedResource of u, without its managedFields
// and with its metadata's strings interned.
func newCachedResource(u *unstructured.Unstructured) (*cachedResource, error) {
	r := &cachedResource{}
	r.SetGroupVersionKind(u.GroupVersionKind())
	md, _ := u.Object["metadata"].(map[string]any)
	if _, ok := md["managedFields"]; ok {
		md = maps.Clone(md) // u is the decoder's; its managedFields go unread
		delete(md, "managedFields")
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &r.ObjectMeta); err != nil {
		return nil, fmt.Errorf("metadata of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	rest := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		if k != "metadata" {
			rest[k] = v
		}
	}
	b, err := json.Marshal(rest)
	if err != nil {
		return nil, fmt.Errorf("encoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	r.rest = resourceJSON.Pack(r.GroupVersionKind(), b)
	intern.Default.Meta(r)
	return r, nil
}

// Unstructured decodes the resource.
func (r *cachedResource) Unstructured() (*unstructured.Unstructured, error) {
	obj := map[string]any{}
	if err := r.rest.Unpack(func(js []byte) error { return utiljson.Unmarshal(js, &obj) }); err != nil {
		return nil, fmt.Errorf("decoding the cached %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
	}
	md, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&r.ObjectMeta)
	if err != nil {
		return nil, fmt.Errorf("metadata of the cached %s %s/%s: %w", r.Kind, r.Namespace, r.Name, err)
	}
	obj["metadata"] = md
	return &unstructured.Unstructured{Object: obj}, nil
}

// DeepCopyObject returns the resource decoded, as an
// *unstructured.Unstructured (see cachedResource). rest was made by
// encoding a decoded object, so it decodes; should it ever not, the copy
// holds the metadata and cacheDecodeError, and the reconciler stops at it
// (Reconciler.Reconcile) rather than act on a resource without its spec
// and status; a reduced object without its status reads as not ready.
// (client-go's KUBE_CACHE_MUTATION_DETECTOR, which compares a
// cached object with its copy, cannot be used with this cache.)
func (r *cachedResource) DeepCopyObject() runtime.Object {
	u, err := r.Unstructured()
	if err != nil {
		u = &unstructured.Unstructured{Object: map[string]any{cacheDecodeError: err.Error()}}
		if md, merr := runtime.DefaultUnstructuredConverter.ToUnstructured(&r.ObjectMeta); merr == nil {
			u.Object["metadata"] = md
		}
		u.SetGroupVersionKind(r.GroupVersionKind())
	}
	return u
}

// cacheDecodeError is the field of a resource read from the cache that
// could not be decoded, with the error.
const cacheDecodeError = "chartkeeper.dev/cache-decode-error"

// resourceTransform keeps a custom resource as a cachedResource (one that
// cannot be made so is kept as decoded, without managedFields).
func resourceTransform(u *unstructured.Unstructured) any {
	if r, err := newCachedResource(u); err == nil {
		return r
	}
	kept, _ := intern.Kept(u)
	return kept
}

// CacheTransform is the manager cache's transform: the custom resources of
// the watched kinds are kept as cachedResource, anything else as other
// says. (A transform by kind, cache.ByObject, would have the manager map
// each kind to its resource when it is built, before the API server is
// needed.)
//
// The manager cache must therefore never be read without a copy
// (client.UnsafeDisableDeepCopy): the copy is what decodes.
func CacheTransform(ws []watches.Watch, other toolscache.TransformFunc) toolscache.TransformFunc {
	kinds := map[schema.GroupVersionKind]bool{}
	for _, w := range ws {
		kinds[w.GroupVersionKind()] = true
	}
	return func(o any) (any, error) {
		if u, ok := o.(*unstructured.Unstructured); ok && kinds[u.GroupVersionKind()] {
			return resourceTransform(u), nil
		}
		return other(o)
	}
}
