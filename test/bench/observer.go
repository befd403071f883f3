package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Labels the observer selects on.
const (
	helmOwnerSelector = "owner=helm"
	chartSelector     = "app.kubernetes.io/part-of=chartkeeper-bench"
	messageAnnotation = "bench.chartkeeper.dev/message"
	byRelease         = "release"
)

// observer watches, as the cluster admin, everything a release is made of
// and answers questions about one release from its caches, so that
// measuring costs the API server one watch per kind, whatever N is.
type observer struct {
	secrets, configMaps, services, crs, deployments cache.Indexer
	stop                                            context.CancelFunc
}

func newObserver(ctx context.Context, admin *rest.Config, cs kubernetes.Interface, gvr schema.GroupVersionResource) (*observer, error) {
	mc, err := metadata.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	selected := func(sel string) metadatainformer.SharedInformerFactory {
		return metadatainformer.NewFilteredSharedInformerFactory(mc, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) { o.LabelSelector = sel })
	}
	helm := selected(helmOwnerSelector)
	chart := selected(chartSelector)
	all := metadatainformer.NewSharedInformerFactory(mc, 0)
	typed := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = chartSelector }))

	secrets := helm.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Informer()
	if err := secrets.AddIndexers(cache.Indexers{byRelease: func(obj any) ([]string, error) {
		m, err := metaOf(obj)
		if err != nil {
			return nil, err
		}
		return []string{m.GetNamespace() + "/" + m.GetLabels()["name"]}, nil
	}}); err != nil {
		cancel()
		return nil, err
	}
	o := &observer{
		secrets:     secrets.GetIndexer(),
		configMaps:  chart.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Informer().GetIndexer(),
		services:    chart.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "services"}).Informer().GetIndexer(),
		crs:         all.ForResource(gvr).Informer().GetIndexer(),
		deployments: typed.Apps().V1().Deployments().Informer().GetIndexer(),
		stop:        cancel,
	}
	for _, f := range []interface {
		Start(<-chan struct{})
		WaitForCacheSync(<-chan struct{}) map[schema.GroupVersionResource]bool
	}{helm, chart, all} {
		f.Start(ctx.Done())
		for r, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				cancel()
				return nil, fmt.Errorf("observer: %s did not sync", r)
			}
		}
	}
	typed.Start(ctx.Done())
	for t, ok := range typed.WaitForCacheSync(ctx.Done()) {
		if !ok {
			cancel()
			return nil, fmt.Errorf("observer: %s did not sync", t)
		}
	}
	return o, nil
}

func metaOf(obj any) (metav1.Object, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("observer: %T has no object metadata", obj)
	}
	return m, nil
}

// deployedVersion is the highest version of k's release in state deployed,
// 0 if none.
func (o *observer) deployedVersion(k key) int {
	objs, _ := o.secrets.ByIndex(byRelease, k.String())
	best := 0
	for _, obj := range objs {
		m, err := metaOf(obj)
		if err != nil || m.GetLabels()["status"] != "deployed" {
			continue
		}
		if v, err := strconv.Atoi(m.GetLabels()["version"]); err == nil && v > best {
			best = v
		}
	}
	return best
}

// releaseStored reports whether any revision of k's release is stored.
func (o *observer) releaseStored(k key) bool {
	objs, _ := o.secrets.ByIndex(byRelease, k.String())
	return len(objs) > 0
}

// ready reports whether k's Deployment rolled out the given message and all
// its replicas are updated, ready and available, with no old ones left.
func (o *observer) ready(k key, message string) bool {
	obj, ok, _ := o.deployments.GetByKey(k.String())
	if !ok {
		return false
	}
	d := obj.(*appsv1.Deployment)
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return d.Spec.Template.Annotations[messageAnnotation] == message &&
		s.ObservedGeneration >= d.Generation &&
		s.UpdatedReplicas == want && s.ReadyReplicas == want && s.AvailableReplicas == want && s.Replicas == want
}

// gone reports whether k's custom resource, release and every released
// object no longer exist.
func (o *observer) gone(k key) bool {
	if o.releaseStored(k) {
		return false
	}
	for _, idx := range []cache.Indexer{o.crs, o.deployments, o.services, o.configMaps} {
		if _, ok, _ := idx.GetByKey(k.String()); ok {
			return false
		}
	}
	return true
}

// close stops the informers.
func (o *observer) close() { o.stop() }

// pollInterval is how often phases look at the observer's caches.
const pollInterval = 100 * time.Millisecond
