package controller

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/chartkeeper/chartkeeper/internal/intern"
)

// NewReleaseSecrets creates the metadata-only cache of every Helm release
// Secret (labelled owner=helm: Helm's driver's and the chunked driver's,
// chartkeeper's and anyone else's) in the watched namespaces, and adds it
// to the manager. The release storage reads through it
// (helm.EveryReleaseSecret): a release made outside chartkeeper (the helm
// CLI) is found there, so nothing is asked of the API server before an
// install. The dependents cache cannot serve for this: its Secrets are
// those with the managed label, released Secrets among them, and one
// informer has one label selector.
//
// Each Secret is kept as little as the storage reads: name, namespace,
// labels, resourceVersion, UID and creation time.
func NewReleaseSecrets(mgr manager.Manager, namespaces []string) (cache.Cache, error) {
	opts := cache.Options{
		Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient(),
		DefaultLabelSelector: labels.SelectorFromSet(labels.Set{"owner": "helm"}),
		DefaultTransform:     revisionMeta,
	}
	c, err := newCache(mgr, namespaces, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the release Secrets cache: %w", err)
	}
	return c, nil
}

// revisionMeta keeps of a Secret's metadata what the release storage
// reads, its strings interned.
func revisionMeta(o any) (any, error) {
	m, ok := o.(*metav1.PartialObjectMetadata)
	if !ok {
		return o, nil
	}
	out := &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion,
		CreationTimestamp: m.CreationTimestamp, Labels: m.Labels,
	}}
	intern.Default.Meta(out)
	return out, nil
}
