package operator

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/chartkeeper/chartkeeper/internal/intern"
)

var stripManagedFields = cache.TransformStripManagedFields()

// cachedObject is the manager cache's transform for what is not a watched
// custom resource (those are kept as controller.CacheTransform says).
// Nothing reads managedFields from the cache. The strings left are
// interned: an object's keys, namespace and labels are those of many
// others.
func cachedObject(o any) (any, error) {
	o, err := stripManagedFields(o)
	if err == nil {
		intern.Default.Object(o)
	}
	return o, err
}
