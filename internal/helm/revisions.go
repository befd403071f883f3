package helm

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Revision is one stored release revision as its storage object's labels
// tell it: no release is decoded.
type Revision struct {
	Version int
	Status  release.Status
	// Labels are the labels stored on the revision (Request.Labels among them).
	Labels map[string]string
	// Modified is when the revision was last written: Helm's modifiedAt
	// label (set on every update), else its createdAt label, else the
	// storage object's creation time (zero when none is known).
	Modified time.Time
	// OwnerUIDs are the UIDs the storage Secret's ownerReferences name (the
	// release Secret, or the chunked driver's index Secret):
	// helm-operator-plugins and operator-sdk's Helm operator put one to
	// their custom resource on every revision they write. Known only where
	// the metadata read keeps owner references (StoredRevisions does; the
	// label-scoped dependents cache does not).
	OwnerUIDs []types.UID
}

// OwnedBy reports whether the revision's storage Secret names uid as an owner.
func (r Revision) OwnedBy(uid types.UID) bool {
	return uid != "" && slices.Contains(r.OwnerUIDs, uid)
}

// Revisions lists a release's revisions, oldest first, from the metadata
// of its release Secrets as r sees them (a label-scoped metadata cache, or
// the API server). Helm's Secret driver labels each Secret owner=helm,
// name, version and status; so does the chunked driver each index Secret
// (its chunk Secrets carry no name: they are not revisions).
func (c *Client) Revisions(ctx context.Context, r client.Reader, name, namespace string) ([]Revision, error) {
	var list metav1.PartialObjectMetadataList
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	if err := r.List(ctx, &list, client.InNamespace(namespace),
		client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
		return nil, fmt.Errorf("listing release revisions: %w", err)
	}
	metas := make([]*metav1.ObjectMeta, len(list.Items))
	for i := range list.Items {
		metas[i] = &list.Items[i].ObjectMeta
	}
	return revisionsOf(metas), nil
}

// StoredRevisions lists a release's revisions, oldest first, as its
// storage holds them now: what the storage itself wrote, and the metadata
// cache (ReadReleasesFrom) for the rest; the API server when neither knows
// of any. Unlike Revisions over a cache, it sees the storage's own writes
// at once; nothing is decoded. Offline, it reads the storage.
func (c *Client) StoredRevisions(ctx context.Context, name, namespace string) ([]Revision, error) {
	if c.clientset == nil {
		hist, err := c.storageFor(namespace, storageOf(ctx)).History(name)
		if err != nil && !IsNotFound(err) {
			return nil, err
		}
		out := make([]Revision, 0, len(hist))
		for _, r := range hist {
			out = append(out, Revision{Version: r.Version, Status: r.Info.Status, Labels: r.Labels, Modified: r.Info.LastDeployed.Time})
		}
		sort.SliceStable(out, func(i, j int) bool { return out[i].Version < out[j].Version })
		return out, nil
	}
	secrets := c.secrets.metadataView(c.clientset.CoreV1().Secrets(namespace), namespace)
	list, err := secrets.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{"owner": "helm", "name": name}).String()})
	if err != nil {
		return nil, fmt.Errorf("listing release revisions: %w", err)
	}
	metas := make([]*metav1.ObjectMeta, len(list.Items))
	for i := range list.Items {
		metas[i] = &list.Items[i].ObjectMeta
	}
	return revisionsOf(metas), nil
}

// revisionsOf reads revisions from release Secrets' metadata, oldest first.
func revisionsOf(metas []*metav1.ObjectMeta) []Revision {
	out := make([]Revision, 0, len(metas))
	for _, s := range metas {
		v, ok := revisionNumber(s.Labels["version"])
		if !ok {
			continue // not a Helm release Secret
		}
		if rel, n, named := revisionKey(s.Name); named && (n != v || rel != s.Labels["name"]) {
			continue // named for another revision: its labels were not written by Helm
		}
		out = append(out, Revision{Version: v, Status: release.Status(s.Labels["status"]), Labels: s.Labels,
			Modified: modified(s.Labels, s.CreationTimestamp.Time), OwnerUIDs: ownerUIDs(s.OwnerReferences)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// ownerUIDs are the UIDs of a Secret's owner references (nil for none).
func ownerUIDs(refs []metav1.OwnerReference) []types.UID {
	var out []types.UID
	for _, r := range refs {
		out = append(out, r.UID)
	}
	return out
}

// revisionNumber reads a version as Helm writes it (strconv.Itoa of a
// revision, 1 or more): "03", "+3", "0" or "-1" is no revision.
func revisionNumber(s string) (int, bool) {
	v, err := strconv.Atoi(s)
	return v, err == nil && v >= 1 && strconv.Itoa(v) == s
}

// revisionKey reads a release Secret's name as both drivers make it,
// sh.helm.release.v1.<release>.v<revision>; named is false for any other.
func revisionKey(name string) (release string, revision int, named bool) {
	rest, ok := strings.CutPrefix(name, "sh.helm.release.v1.")
	i := strings.LastIndex(rest, ".v")
	if !ok || i <= 0 {
		return "", 0, false
	}
	revision, named = revisionNumber(rest[i+2:])
	return rest[:i], revision, named
}

// modified reads when a release Secret was last written from the labels
// Helm's Secret driver keeps (Unix seconds), falling back to created.
func modified(labels map[string]string, created time.Time) time.Time {
	for _, l := range []string{"modifiedAt", "createdAt"} {
		if sec, err := strconv.ParseInt(labels[l], 10, 64); err == nil && sec > 0 {
			return time.Unix(sec, 0)
		}
	}
	return created
}

// ReleaseOf names the release a Secret stores a revision of, from its
// labels; ok is false for a Secret that is not a Helm release Secret.
func ReleaseOf(labels map[string]string) (name string, ok bool) {
	if labels["owner"] != "helm" {
		return "", false
	}
	return labels["name"], labels["name"] != ""
}

// SetFieldManager names the field manager of every write Helm makes
// (managedFields). It is process-wide: Helm keeps it in a package variable.
func SetFieldManager(name string) { kube.ManagedFieldsManager = name }
