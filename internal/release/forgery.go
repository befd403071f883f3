package release

import (
	"context"
	"fmt"

	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Stored revisions are signed by the release storage under the operator's
// key (internal/helm/signing.go). A revision whose signature does not
// match is refused when decoded (*helm.ForgedError); the engine then
// leaves the release alone: Observation.Forged, Stalled ReleaseForged, and
// a deleted resource's finalizer is dropped without an uninstall. A
// revision without a signature (written before signing, or by a person's
// helm) is never trusted for what it names: it is not a rollback target,
// it is upgraded back as made outside chartkeeper (not drift-corrected or
// pruned from), and one that names an object outside the watch's scope is
// refused as forged. Every object of a stored revision is also admitted
// against the scope wherever Helm writes or deletes it (helm.Admit).

// WithSignedReleases says the release storage signs revisions (the Helm
// client has a key: helm.Client.SignWith): unsigned ones are then not
// trusted. Default: off (offline tests, whose storage signs nothing).
func WithSignedReleases() Option { return func(e *Engine) { e.signed = true } }

// unsignedVerdict is what was found of an unsigned revision.
type unsignedVerdict struct {
	// forged names the object outside the scope ("" if none).
	forged string
	// who describes the revision as Helm recorded it (describe).
	who string
}

// forgery returns why the release must be left alone ("" when it need
// not): a revision found forged before (by a decode or an action) that is
// still stored and still does not verify, or an unsigned latest revision
// that names objects outside the scope. For an unsigned latest revision it
// also returns what Helm recorded of it.
func (e *Engine) forgery(ctx context.Context, t Target, ref watches.ReleaseRef, revs []helm.Revision) (forged string, unsigned *unsignedVerdict, err error) {
	key := releaseKey(ref)
	for _, r := range revs {
		msg, ok := e.forged.get(key, r.Version)
		if !ok {
			continue
		}
		// Looked at again: an administrator may have restored or deleted it.
		if _, err := e.helm.Get(ctx, ref.Name, ref.Namespace, r.Version); err != nil {
			if _, ok := helm.IsForged(err); ok {
				return msg, nil, nil
			}
			return "", nil, fmt.Errorf("reading revision %d: %w", r.Version, err)
		}
		e.forged.drop(key, r.Version)
	}
	if !e.signed || len(revs) == 0 {
		return "", nil, nil
	}
	l := revs[len(revs)-1]
	if l.Signed() {
		return "", nil, nil
	}
	v, ok := e.unsigned.get(key, l.Version)
	if !ok {
		rel, err := e.helm.Get(ctx, ref.Name, ref.Namespace, l.Version)
		if err != nil {
			if fe, ok := helm.IsForged(err); ok {
				return e.foundForged(key, fe), nil, nil
			}
			return "", nil, fmt.Errorf("reading revision %d: %w", l.Version, err)
		}
		v = unsignedVerdict{who: describe(rel)}
		if p, bad := e.outsideScope(rel, t.Watch.Scope, ref.Namespace); bad {
			v.forged = fmt.Sprintf("revision %d of release %s carries no chartkeeper signature and names %s: it was not written by chartkeeper; it is left alone",
				l.Version, key, (&ScopeError{Object: p, ReleaseNamespace: ref.Namespace}).Error())
		}
		// A revision still in progress (a person's helm mid-upgrade) is
		// looked at again once Helm has written how it ended.
		if rel.Info == nil || !rel.Info.Status.IsPending() {
			e.unsigned.setOnly(key, l.Version, v)
		}
	}
	if v.forged != "" {
		return v.forged, nil, nil
	}
	return "", &v, nil
}

// foundForged remembers a revision found forged and returns its message.
func (e *Engine) foundForged(key string, fe *helm.ForgedError) string {
	msg := fe.Error()
	e.forged.set(key, fe.Version, msg)
	return msg
}

// outsideScope returns the first object of a revision (manifest or hook)
// the scope does not allow.
func (e *Engine) outsideScope(rel *helmrelease.Release, scope *watches.Scope, releaseNS string) (ownership.Placement, bool) {
	admit := admitScope(scope, releaseNS)
	manifests := []string{rel.Manifest}
	for _, h := range rel.Hooks {
		if h != nil {
			manifests = append(manifests, h.Manifest)
		}
	}
	for _, m := range manifests {
		objs, err := parseManifest(m, releaseNS, e.helm.Mapper())
		if err != nil {
			continue // Helm cannot apply it either
		}
		for _, ob := range objs {
			if p := ob.placement(); admit(p) != nil {
				return p, true
			}
		}
	}
	return ownership.Placement{}, false
}

// placement is where a stored object goes, for the scope check.
func (ob object) placement() ownership.Placement {
	return ownership.Placement{GVK: ob.GVK, Namespace: ob.Namespace, Name: ob.Name, ClusterScoped: ob.Namespace == ""}
}

// admitStored checks objects of a stored revision against the watch's
// scope before the engine itself writes or deletes them (drift
// correction, prune).
func (s *step) admitStored(objs []object) error {
	admit := admitScope(s.t.Watch.Scope, s.d.ref.Namespace)
	for _, ob := range objs {
		if err := admit(ob.placement()); err != nil {
			return err
		}
	}
	return nil
}

// trustedTargets are the revisions a rollback may go back to: with signed
// storage, only signed ones (an unsigned revision's manifest is not
// re-applied).
func (e *Engine) trustedTargets(revs []helm.Revision) []helm.Revision {
	if !e.signed {
		return revs
	}
	out := make([]helm.Revision, 0, len(revs))
	for i, r := range revs {
		if r.Signed() || i == len(revs)-1 { // the latest is never a target
			out = append(out, r)
		}
	}
	return out
}

// unsignedMessage is the out-of-band message of an unsigned latest revision.
func unsignedMessage(version int, v *unsignedVerdict) string {
	return fmt.Sprintf("revision %d was made outside chartkeeper (%s; it carries no chartkeeper signature): upgrading back to the desired chart and values",
		version, v.who)
}

// stalledSo reports whether the status already says Stalled for reason
// with message (an Event was recorded when it first did).
func (s *step) stalledSo(reason api.Reason, message string) bool {
	c := meta.FindStatusCondition(s.st.Conditions, api.ConditionStalled)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == string(reason) && c.Message == message
}
