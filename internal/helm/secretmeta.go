package helm

import (
	"maps"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/intern"
)

// secretMeta is what the secret cache keeps of a Secret besides its
// labels, resourceVersion and data.
//
// A release Secret's metadata is its name, namespace, UID, version,
// creation time and labels, nothing else: those are kept as fields, and a
// Secret is rebuilt from them for each read (the name and namespace are the
// cache's key; the labels map is shared with the metadata cache's copy,
// package intern). A whole corev1.Secret kept for it held 320 bytes per
// revision. A Secret with anything more (annotations, owner references,
// finalizers, a deletion under way: someone else's doing) keeps its whole
// metadata, so that a read answers what the API server would.
type secretMeta struct {
	uid       types.UID
	created   metav1.Time
	typ       corev1.SecretType
	immutable *bool
	// whole is the Secret without its data, when the fields above do not
	// say all of it.
	whole *corev1.Secret
}

// keepMeta returns what the cache keeps of s (its managedFields dropped:
// read by nobody here, a third of a small Secret). labels is s's labels
// map as interned.
func keepMeta(s *corev1.Secret, labels map[string]string) *secretMeta {
	m := &secretMeta{uid: s.UID, created: s.CreationTimestamp, typ: s.Type}
	if s.Immutable != nil {
		m.immutable = new(bool)
		*m.immutable = *s.Immutable
	}
	if !onlyTheUsualMeta(s) {
		whole := &corev1.Secret{TypeMeta: s.TypeMeta, Immutable: m.immutable, Type: s.Type}
		s.ObjectMeta.DeepCopyInto(&whole.ObjectMeta)
		whole.ManagedFields = nil
		intern.Default.Meta(whole) // interns a copy of the labels: labels, shared, is never written
		whole.Labels = labels
		m.whole = whole
	}
	return m
}

// onlyTheUsualMeta reports whether s's metadata is all in secretMeta's
// fields, the cache's key, labels and resourceVersion.
func onlyTheUsualMeta(s *corev1.Secret) bool {
	o := s.ObjectMeta
	rv, ok := parseRV(o.ResourceVersion)
	//lint:ignore SA1019 a selfLink, however it got there, is metadata the cache would not keep
	selfLink := o.SelfLink
	return ok && strconv.FormatUint(rv, 10) == o.ResourceVersion &&
		s.TypeMeta == (metav1.TypeMeta{}) && o.GenerateName == "" && selfLink == "" && o.Generation == 0 &&
		o.DeletionTimestamp == nil && o.DeletionGracePeriodSeconds == nil &&
		len(o.Annotations) == 0 && len(o.OwnerReferences) == 0 && len(o.Finalizers) == 0
}

// secret returns the Secret ns/name without its data, a copy the caller
// owns, at resourceVersion rv with labels.
func (m *secretMeta) secret(ns, name string, labels map[string]string, rv uint64) *corev1.Secret {
	if m.whole != nil {
		return m.whole.DeepCopy()
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
		Name: name, Namespace: ns, UID: m.uid, ResourceVersion: strconv.FormatUint(rv, 10),
		CreationTimestamp: m.created, Labels: maps.Clone(labels),
	}, Type: m.typ}
	if m.immutable != nil {
		s.Immutable = new(bool)
		*s.Immutable = *m.immutable
	}
	return s
}

// secretFields are the fields a Secret can be selected by.
func secretFields(ns, name string, typ corev1.SecretType) fields.Set {
	return fields.Set{"metadata.name": name, "metadata.namespace": ns, "type": string(typ)}
}
