package controller

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/chartkeeper/chartkeeper/internal/release"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// syncWait bounds how long a read waits for a new watch's first list.
const syncWait = 10 * time.Second

// objectWatch watches one ConfigMap or Secret, and only it: an informer
// whose list and watch carry the field selector metadata.name=<name> in its
// namespace. Its store (the object's data, nothing else) serves reads.
type objectWatch struct {
	obj      watches.SourceObject
	informer cache.SharedIndexInformer
	stop     context.CancelFunc
	mu       sync.Mutex
	err      error // the last list or watch error
	// readFailed: a read found the watch not synced (an error was
	// reported): the first sync then counts as a change.
	readFailed atomic.Bool
}

// startObjectWatch starts watching obj until stop; changed is called
// when it is created, its data changes or it is deleted (not for what the
// first list finds: the resource that starts the watch reads that).
func startObjectWatch(parent context.Context, cs kubernetes.Interface, obj watches.SourceObject, changed func(watches.SourceObject), log logr.Logger) *objectWatch {
	ctx, stop := context.WithCancel(parent)
	w := &objectWatch{obj: obj, stop: stop}
	var example runtime.Object = &corev1.ConfigMap{}
	if obj.Kind == watches.SourceSecret {
		example = &corev1.Secret{}
	}
	w.informer = cache.NewSharedIndexInformer(objectListWatch(cs, obj), example, 0, cache.Indexers{})
	_ = w.informer.SetTransform(dataOnly)
	_ = w.informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		log.V(1).Info("watching a valuesFrom object failed; retrying", "object", obj.String(), "error", err.Error())
	})
	_, _ = w.informer.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(_ any, initial bool) {
			if !initial {
				changed(obj)
			}
		},
		UpdateFunc: func(old, cur any) {
			if !sameData(old, cur) {
				changed(obj)
			}
		},
		DeleteFunc: func(any) { changed(obj) },
	})
	go w.informer.RunWithContext(ctx)
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), w.informer.HasSynced) && w.readFailed.Load() {
			changed(obj)
		}
	}()
	return w
}

// objectListWatch lists and watches obj alone.
func objectListWatch(cs kubernetes.Interface, obj watches.SourceObject) *cache.ListWatch {
	if obj.Kind == watches.SourceSecret {
		return oneObject(cs.CoreV1().Secrets(obj.Namespace), obj.Name)
	}
	return oneObject(cs.CoreV1().ConfigMaps(obj.Namespace), obj.Name)
}

// listWatcher is what a typed client of one namespace's ConfigMaps or
// Secrets offers to an informer.
type listWatcher[L runtime.Object] interface {
	List(context.Context, metav1.ListOptions) (L, error)
	Watch(context.Context, metav1.ListOptions) (watch.Interface, error)
}

// oneObject lists and watches the object of that name only.
func oneObject[L runtime.Object](c listWatcher[L], name string) *cache.ListWatch {
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	return &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return c.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return c.Watch(ctx, o)
		},
	}
}

// dataOnly keeps of an object what valuesFrom reads (its data) and what
// the store needs (name, namespace, resourceVersion): no annotations
// (kubectl's last-applied-configuration would hold the data twice), no
// managedFields.
func dataOnly(o any) (any, error) {
	switch x := o.(type) {
	case *corev1.Secret:
		return &corev1.Secret{ObjectMeta: keyMeta(x.ObjectMeta), Data: x.Data}, nil
	case *corev1.ConfigMap:
		return &corev1.ConfigMap{ObjectMeta: keyMeta(x.ObjectMeta), Data: x.Data, BinaryData: x.BinaryData}, nil
	}
	return o, nil
}

func keyMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, ResourceVersion: m.ResourceVersion}
}

// read returns the object's data from the store, once the first list is
// in (waiting up to syncWait); found is false when it does not exist.
// The data is the store's: it must not be changed.
func (w *objectWatch) read(ctx context.Context) (map[string][]byte, bool, error) {
	if !w.informer.HasSynced() {
		wctx, cancel := context.WithTimeout(ctx, syncWait)
		defer cancel()
		_ = wait.PollUntilContextCancel(wctx, 20*time.Millisecond, true, func(context.Context) (bool, error) {
			return w.informer.HasSynced() || w.lastErr() != nil, nil
		})
		if !w.informer.HasSynced() {
			w.readFailed.Store(true)
			if err := w.lastErr(); err != nil {
				return nil, false, fmt.Errorf("watching %s: %w", w.obj, err)
			}
			return nil, false, fmt.Errorf("watching %s: no answer within %s", w.obj, syncWait)
		}
	}
	item, found, err := w.informer.GetStore().GetByKey(w.obj.Namespace + "/" + w.obj.Name)
	if err != nil || !found {
		return nil, false, err
	}
	switch x := item.(type) {
	case *corev1.Secret:
		return x.Data, true, nil
	case *corev1.ConfigMap:
		return release.ConfigMapData(x), true, nil
	}
	return nil, false, fmt.Errorf("watching %s: unexpected %T in the store", w.obj, item)
}

func (w *objectWatch) lastErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// sameData reports whether two versions of a watched object hold the same
// data (a change of its labels, say, changes no values).
func sameData(a, b any) bool {
	switch x := a.(type) {
	case *corev1.Secret:
		y, ok := b.(*corev1.Secret)
		return ok && reflect.DeepEqual(x.Data, y.Data)
	case *corev1.ConfigMap:
		y, ok := b.(*corev1.ConfigMap)
		return ok && reflect.DeepEqual(x.Data, y.Data) && reflect.DeepEqual(x.BinaryData, y.BinaryData)
	}
	return false
}
