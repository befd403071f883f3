package operator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// unwatchedDoc is where the way out is documented.
const unwatchedDoc = "docs/release-engine.md#a-kind-removed-from-watchesyaml"

// maxNamed bounds how many releases one log line names.
const maxNamed = 10

// unwatchedReport looks once, at start, for releases chartkeeper made for
// a kind that is no longer in watches.yaml (by the owner-kind label of
// their release Secrets). Their custom resources still carry chartkeeper's
// finalizer and nothing serves them now: deleting one would hang. Each such
// kind is logged, with the releases and the way out, and counted in the
// chartkeeper_unwatched_releases metric. It runs on every replica; it only
// reads.
type unwatchedReport struct {
	reader     client.Reader
	watches    []watches.Watch
	namespaces []string
	log        logr.Logger
}

func (u *unwatchedReport) NeedLeaderElection() bool { return false }

func (u *unwatchedReport) Start(ctx context.Context) error {
	found, err := u.find(ctx)
	if err != nil {
		// A report, not a duty: the operator runs on without it.
		u.log.Error(err, "could not look for releases of kinds no longer in watches.yaml")
		return nil
	}
	for _, kind := range slices.Sorted(maps.Keys(found)) {
		rels := found[kind]
		metrics.SetUnwatched(kind, len(rels))
		named := rels
		if len(named) > maxNamed {
			named = named[:maxNamed]
		}
		u.log.Info(fmt.Sprintf("kind %s is not in watches.yaml, but %d of its releases remain; its custom resources keep the finalizer %s and cannot be deleted while no operator serves the kind: add the kind back to watches.yaml and delete them, or remove the finalizer by hand (see %s)",
			kind, len(rels), api.Finalizer, unwatchedDoc),
			"kind", kind, "releases", strings.Join(named, ", "))
	}
	return nil
}

// find returns, per unwatched kind, the releases ("<namespace>/<name>")
// whose latest revisions say they belong to it.
func (u *unwatchedReport) find(ctx context.Context) (map[string][]string, error) {
	watched := map[string]bool{}
	for _, w := range u.watches {
		watched[w.GroupVersionKind().GroupKind().String()] = true
	}
	sel := labels.NewSelector()
	for _, r := range []struct {
		key string
		op  selection.Operator
		v   []string
	}{{api.LabelManaged, selection.Equals, []string{"true"}}, {"owner", selection.Equals, []string{"helm"}}, {api.LabelOwnerKind, selection.Exists, nil}} {
		req, err := labels.NewRequirement(r.key, r.op, r.v)
		if err != nil {
			return nil, err
		}
		sel = sel.Add(*req)
	}
	namespaces := u.namespaces
	if len(namespaces) == 0 {
		namespaces = []string{metav1.NamespaceAll}
	}
	seen := map[string]map[string]bool{}
	for _, ns := range namespaces {
		var list metav1.PartialObjectMetadataList
		list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
		if err := u.reader.List(ctx, &list, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel}); err != nil {
			return nil, fmt.Errorf("listing release Secrets: %w", err)
		}
		for _, s := range list.Items {
			kind := s.Labels[api.LabelOwnerKind]
			if watched[kind] || s.Labels["name"] == "" {
				continue
			}
			if seen[kind] == nil {
				seen[kind] = map[string]bool{}
			}
			seen[kind][s.Namespace+"/"+s.Labels["name"]] = true
		}
	}
	out := map[string][]string{}
	for kind, rels := range seen {
		out[kind] = slices.Sorted(maps.Keys(rels))
	}
	return out, nil
}
