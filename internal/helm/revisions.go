package helm

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	out := make([]Revision, 0, len(list.Items))
	for _, s := range list.Items {
		v, err := strconv.Atoi(s.Labels["version"])
		if err != nil {
			continue // not a Helm release Secret
		}
		out = append(out, Revision{Version: v, Status: release.Status(s.Labels["status"]), Labels: s.Labels,
			Modified: modified(s.Labels, s.CreationTimestamp.Time)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out, nil
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
