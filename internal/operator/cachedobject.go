package operator

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/chartkeeper/chartkeeper/internal/intern"
)

var stripManagedFields = cache.TransformStripManagedFields()

// cachedObject is the manager cache's transform (custom resources, and
// what else is read through it). Nothing reads managedFields from the
// cache; they were a large part of every cached custom resource. The
// strings left are interned: a custom resource's keys, condition reasons
// and messages, namespace and labels are those of many others.
func cachedObject(o any) (any, error) {
	o, err := stripManagedFields(o)
	if err == nil {
		intern.Default.Object(o)
	}
	return o, err
}
