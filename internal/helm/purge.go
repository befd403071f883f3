package helm

import (
	"context"
	"slices"
	"strconv"

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
		err = d.secrets.DeleteCollection(ctx, metav1.DeleteOptions{}, noOlderThan(list.Items, metav1.ListOptions{LabelSelector: sel, FieldSelector: only}))
		if err == nil || !(apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err)) {
			return err
		}
	}
	return deleteEach(d, keys)
}

// noOlderThan asks the list inside a deletecollection to be no older
// than the newest of the revisions it deletes (their highest
// resourceVersion; none known: a consistent list, the API server's default).
//
// A consistent list waits until the API server's watch cache has caught
// up with etcd's latest revision (of any object), which it learns by
// asking etcd for a progress notification. That wait, not the deletes,
// was most of an uninstall: 100 ms of each at concurrency 1 (make bench
// BENCH_N=100 BENCH_CONCURRENCY=1: the delete of 100 took 10.4 s, 2.3 s
// with this). Every revision being deleted is at or below that version,
// so a list at least this fresh holds them all.
func noOlderThan(secrets []corev1.Secret, lo metav1.ListOptions) metav1.ListOptions {
	var best uint64
	for _, s := range secrets {
		if rv, ok := parseRV(s.ResourceVersion); ok && rv > best {
			best = rv
		}
	}
	if best > 0 {
		lo.ResourceVersion, lo.ResourceVersionMatch = strconv.FormatUint(best, 10), metav1.ResourceVersionMatchNotOlderThan
	}
	return lo
}
