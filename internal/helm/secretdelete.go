package helm

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

// The secret cache's deletions: each leaves a tombstone, so that a read
// before the metadata cache shows the deletion does not find the Secret.

// Delete deletes and leaves a tombstone: until the metadata cache shows
// a newer version, the Secret is gone.
func (v *cachedSecrets) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	err := v.SecretInterface.Delete(ctx, name, opts)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	v.c.bury(v.ns + "/" + name)
	v.c.sweep()
	return err
}

// DeleteCollection deletes the Secrets the selectors pick and leaves a
// tombstone for each one remembered here that they pick. After a failure
// some may be gone: those are found so by their next read.
func (v *cachedSecrets) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	sel, err := labels.Parse(list.LabelSelector)
	if err != nil {
		return err
	}
	fsel, err := fields.ParseSelector(list.FieldSelector)
	if err != nil {
		return err
	}
	if err := v.SecretInterface.DeleteCollection(ctx, opts, list); err != nil {
		return err
	}
	v.c.mu.Lock()
	defer v.c.mu.Unlock()
	for key, e := range v.c.inNamespace(v.ns, sel) {
		if e.meta != nil && sel.Matches(labels.Set(e.labels)) && fsel.Matches(secretFields(v.ns, key[len(v.ns)+1:], e.meta.typ)) {
			v.c.bury(key)
		}
	}
	v.c.sweep()
	return nil
}

// bury leaves a tombstone for ns/name (with c.mu held): until the metadata
// cache shows a newer version, the Secret is gone.
func (c *secretCache) bury(key string) {
	e := c.secrets[key]
	if e == nil {
		e = &cachedSecret{}
		c.put(key, e)
	}
	if e.meta != nil {
		forgetLabels(e.labels) // kept for the index, but no Secret has them now
	}
	// A tombstone's version is the one deleted, so the metadata cache's
	// copy of that version (or an older one) counts as gone.
	e.meta, e.data, e.at = nil, packedData{}, c.now()
	if e.rv == 0 {
		e.rv = ^uint64(0) >> 1 // not known: believe the tombstone until forgotten
	}
}
