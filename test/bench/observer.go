package bench

import (
	"context"
	"errors"
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

// Labels the observer selects on, and its index.
const (
	helmOwnerSelector = "owner=helm"
	byRelease         = "release"
)

// observer watches, as the cluster admin, everything a release is made of
// and answers questions about one release from its caches, so that
// measuring costs the API server one watch per kind, whatever N is.
type observer struct {
	secrets, crs cache.Indexer
	// deployments are the released Deployments, whole (their rollout).
	deployments cache.Indexer
	// released hold every kind the chart releases, Deployments among
	// them; each is indexed by release.
	released []cache.Indexer
	stop     context.CancelFunc
}

// newObserver watches the custom resources (crGVR), Helm's release
// Secrets and the released objects: the resources in released, limited to
// the scenario's selector.
func newObserver(ctx context.Context, admin *rest.Config, cs kubernetes.Interface, crGVR schema.GroupVersionResource, selector string, released []schema.GroupVersionResource) (*observer, error) {
	mc, err := metadata.NewForConfig(admin)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	selected := func(sel string) metadatainformer.SharedInformerFactory {
		return metadatainformer.NewFilteredSharedInformerFactory(mc, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) { o.LabelSelector = sel })
	}
	helm := selected(helmOwnerSelector)
	chart := selected(selector)
	all := metadatainformer.NewSharedInformerFactory(mc, 0)
	typed := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))

	o := &observer{stop: cancel}
	indexed := func(inf cache.SharedIndexInformer, label string) (cache.Indexer, error) {
		return inf.GetIndexer(), inf.AddIndexers(cache.Indexers{byRelease: labelIndex(label)})
	}
	var errs []error
	var e error
	o.secrets, e = indexed(helm.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Informer(), "name")
	errs = append(errs, e)
	o.deployments, e = indexed(typed.Apps().V1().Deployments().Informer(), releaseLabel)
	errs = append(errs, e)
	o.crs = all.ForResource(crGVR).Informer().GetIndexer()
	for _, gvr := range released {
		if gvr == deploymentsGVR {
			o.released = append(o.released, o.deployments)
			continue
		}
		idx, e := indexed(chart.ForResource(gvr).Informer(), releaseLabel)
		errs = append(errs, e)
		o.released = append(o.released, idx)
	}
	if err := errors.Join(errs...); err != nil {
		cancel()
		return nil, err
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

var deploymentsGVR = appsv1.SchemeGroupVersion.WithResource("deployments")

// labelIndex indexes objects by namespace/value of the label: the release
// they belong to.
func labelIndex(label string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		m, err := metaOf(obj)
		if err != nil {
			return nil, err
		}
		v, ok := m.GetLabels()[label]
		if !ok {
			return nil, nil
		}
		return []string{m.GetNamespace() + "/" + v}, nil
	}
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

// ready reports whether every Deployment of k's release (at least one)
// has rolled out the given message.
func (o *observer) ready(k key, message string) bool {
	objs, _ := o.deployments.ByIndex(byRelease, k.String())
	for _, obj := range objs {
		if !rolledOut(obj.(*appsv1.Deployment), message) {
			return false
		}
	}
	return len(objs) > 0
}

// rolledOut reports whether the Deployment runs the given message: its Pod
// template carries it (messageAnnotation), the controller has caught up
// with this generation, and the replicas it wants are all updated, ready
// and available, with no old ones left. A Deployment scaled to 0 (the
// podinfo scenario's) is rolled out once the controller has seen the
// generation carrying the message and counts no replica of any kind.
func rolledOut(d *appsv1.Deployment, message string) bool {
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
	if _, ok, _ := o.crs.GetByKey(k.String()); ok {
		return false
	}
	for _, idx := range o.released {
		if objs, _ := idx.ByIndex(byRelease, k.String()); len(objs) > 0 {
			return false
		}
	}
	return true
}

// close stops the informers.
func (o *observer) close() { o.stop() }

// pollInterval is how often phases look at the observer's caches.
const pollInterval = 100 * time.Millisecond
