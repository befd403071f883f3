package release

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// ownerRecheck is how often a resource refused because its release belongs
// to someone else looks again (the owner may have gone; a release made
// outside chartkeeper is not in the watched cache).
const ownerRecheck = 30 * time.Second

// message says whose the release is and what to do.
func (r ReleaseOwner) message() string {
	if r.Foreign {
		return fmt.Sprintf("release %s was not made by chartkeeper (no %s label: a helm install by hand?) and this kind's watch does not adopt releases: it is left alone. Uninstall it, give the resource another name, or set adopt: true on the watch to take it over",
			r.Release, api.LabelManaged)
	}
	return fmt.Sprintf("release %s belongs to %s: nothing is done to it. Rename one of the two resources (or give one kind its own releaseName in watches.yaml), or delete %s",
		r.Release, r.By, r.By)
}

// claimant is the custom resource recorded on a revision.
type claimant struct {
	gk        schema.GroupKind
	namespace string
	name      string
	uid       string
}

func (c claimant) String() string {
	if c.name == "" {
		return c.gk.Kind + " (uid " + c.uid + ")"
	}
	return fmt.Sprintf("%s %s/%s", c.gk.Kind, c.namespace, c.name)
}

// ownerOf tells whether the release whose revisions (oldest first) are revs
// belongs to obj. The rule (docs/release-engine.md, Ownership): a revision
// not made by chartkeeper whose storage Secret is owned by obj (a
// predecessor operator's) is obj's, to be taken over; any other not made
// by chartkeeper is adopted only when the watch says adopt; one
// labelled with another resource's UID, or (made by an older chartkeeper,
// without the UID label) describing another resource, belongs to that
// resource while it exists; anything else is obj's.
func (e *Engine) ownerOf(ctx context.Context, t Target, obj *unstructured.Unstructured, ref watches.ReleaseRef, revs []helm.Revision) (ReleaseOwner, error) {
	if len(revs) == 0 {
		return ReleaseOwner{}, nil
	}
	l := revs[len(revs)-1]
	refused := ReleaseOwner{Release: ref.Namespace + "/" + ref.Name}
	if l.Labels[api.LabelManaged] != "true" {
		if l.OwnedBy(obj.GetUID()) && !madeByChartkeeper(revs) { // a predecessor's, made for obj: taken over
			return ReleaseOwner{Predecessor: true}, nil
		}
		refused.Foreign = true
		if t.Watch.Policy.Adopt {
			return ReleaseOwner{}, nil
		}
		return refused, nil
	}
	uid := l.Labels[api.LabelOwnerUID]
	if uid != "" && uid == string(obj.GetUID()) {
		return ReleaseOwner{}, nil
	}
	self := obj.GroupVersionKind().GroupKind()
	c := claimant{uid: uid}
	if k := l.Labels[api.LabelOwnerKind]; k != "" {
		c.gk = schema.ParseGroupKind(k)
	}
	if d, ok := e.describedOwner(ctx, ref, revs, uid); ok && (c.gk.Kind == "" || c.gk.Kind == d.gk.Kind) {
		c.namespace, c.name = d.namespace, d.name
		if c.gk.Kind == "" {
			c.gk = d.gk
			if c.gk.Kind == self.Kind {
				c.gk.Group = self.Group // the description names no group
			}
		}
	}
	if uid == "" { // an older chartkeeper's release: the label and description tell
		mine := (c.gk.Kind == "" || c.gk == self) && (c.name == "" || (c.namespace == obj.GetNamespace() && c.name == obj.GetName()))
		if mine {
			return ReleaseOwner{}, nil // adopted: the next upgrade writes the UID label
		}
	}
	exists, err := e.claimantExists(ctx, c)
	if err != nil {
		return ReleaseOwner{}, err
	}
	if !exists {
		return ReleaseOwner{}, nil // its owner is gone: nobody's, adopted
	}
	refused.By = c.String()
	return refused, nil
}

// madeByChartkeeper reports whether any revision carries chartkeeper's
// label: a release chartkeeper wrote is never taken over as a
// predecessor's (an unlabelled revision on top of it was not written by a
// predecessor, whose Helm copies the last revision's labels).
func madeByChartkeeper(revs []helm.Revision) bool {
	for _, r := range revs {
		if r.Labels[api.LabelManaged] == "true" {
			return true
		}
	}
	return false
}

// describedOwner reads who made a revision from the description chartkeeper
// writes ("chartkeeper: <Kind> <namespace>/<name> generation N"), newest
// revision first among those with the same owner UID label (a rollback's
// description is Helm's own). Each revision is decoded at most once.
func (e *Engine) describedOwner(ctx context.Context, ref watches.ReleaseRef, revs []helm.Revision, uid string) (claimant, bool) {
	for i := len(revs) - 1; i >= 0; i-- {
		r := revs[i]
		if r.Labels[api.LabelOwnerUID] != uid {
			continue
		}
		d, found := e.descriptions.get(releaseKey(ref), r.Version)
		if !found {
			rel, err := e.helm.Get(ctx, ref.Name, ref.Namespace, r.Version)
			if err != nil {
				return claimant{}, false
			}
			if rel.Info != nil {
				d.c, d.ok = parseDescription(rel.Info.Description)
			}
			e.descriptions.set(releaseKey(ref), r.Version, d)
		}
		if d.ok {
			return d.c, true
		}
	}
	return claimant{}, false
}

// parseDescription reads "chartkeeper: <Kind> <namespace>/<name> generation N".
func parseDescription(s string) (claimant, bool) {
	f := strings.Fields(s)
	if len(f) != 5 || f[0] != "chartkeeper:" || f[3] != "generation" {
		return claimant{}, false
	}
	ns, name, ok := strings.Cut(f[2], "/")
	if !ok || name == "" {
		return claimant{}, false
	}
	return claimant{gk: schema.GroupKind{Kind: f[1]}, namespace: ns, name: name}, true
}

// claimantExists reports whether the resource a release names still exists
// (with the UID recorded, when one is). When that cannot be told (kind
// unknown, name unknown) it is taken to exist: nothing is taken over.
func (e *Engine) claimantExists(ctx context.Context, c claimant) (bool, error) {
	m := e.helm.Mapper()
	if m == nil || c.name == "" || c.gk.Kind == "" {
		return true, nil
	}
	mapping, err := m.RESTMapping(c.gk)
	if err != nil {
		return true, nil
	}
	u := &metav1.PartialObjectMetadata{}
	u.SetGroupVersionKind(mapping.GroupVersionKind)
	if err := e.live.Get(ctx, client.ObjectKey{Namespace: c.namespace, Name: c.name}, u); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	return c.uid == "" || string(u.GetUID()) == c.uid, nil
}

// descriptionCache remembers who each revision's description names, per
// describedAs is what a revision's description says of its owner
// (Engine.descriptions keeps it per revision, so that a refused resource
// does not decode the release on every step).
type describedAs struct {
	c  claimant
	ok bool
}
