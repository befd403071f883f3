package helm

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// historyPurger is a driver that can delete revisions of a release
// together.
//
// An uninstall deletes every revision of its release. Helm deletes them
// one request each (make bench: two of the seven requests a delete cost
// per custom resource, after one upgrade; more with a longer history).
// Here an uninstall's deletions are held (oneWriteDriver.Delete) and
// purged with one deletecollection of the release's Secrets by label.
type historyPurger interface {
	// purge deletes the revisions stored under keys, which are every
	// revision of release name.
	purge(name string, keys []string) error
}

// purge deletes the revisions of a release in one request when Helm's
// Secret driver stored each of them and the Secrets labelled as the
// release's (owner=helm, name) are those revisions and no other (the
// listing is the storage's cache: no request). Otherwise, or when the
// operator may not delete a collection of Secrets (RBAC from before it
// needed it), each revision is deleted by its driver.
func (d *switchingDriver) purge(name string, keys []string) error {
	ctx := context.Background()
	sel := labels.Set{"owner": "helm", "name": name}.String()
	list, err := d.secrets.List(ctx, metav1.ListOptions{LabelSelector: sel})
	// Only release Secrets: a Secret of another type that a person labelled
	// so, or one made since the cache's listing, is not the history's.
	only := fields.OneTermEqualSelector("type", releaseSecretType).String()
	if err == nil && len(list.Items) == len(keys) && !slices.ContainsFunc(list.Items, func(s corev1.Secret) bool {
		return string(s.Type) != releaseSecretType || !slices.Contains(keys, s.Name)
	}) {
		err = d.secrets.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel, FieldSelector: only})
		if err == nil || !(apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err)) {
			return err
		}
	}
	return deleteEach(d, keys)
}
