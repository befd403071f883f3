package release

import (
	"context"
	"fmt"
	"sync"

	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// uninstall removes the release and its history: on deletion (after the
// BeforeUninstall hooks), as the remediation of a failed install, and to
// clear an interrupted uninstall. On deletion it first remembers the
// released objects, to wait for them to go, unless the API server's
// answers to their DELETEs said they went at once.
type uninstall struct{}

func (uninstall) kind() ActionKind { return ActionUninstall }

// hooksBefore: BeforeUninstall hooks run before the uninstall of a deleted
// resource only.
func (uninstall) hooksBefore(s *step) hookPhase {
	if s.o.Deleting {
		return beforeUninstallHooks
	}
	return noHooks
}

func (uninstall) run(ctx context.Context, s *step) (*helmrelease.Release, error) {
	var objs []object
	if s.o.Latest != nil {
		objs, _ = s.e.objects(ctx, s.d.ref, s.o.Latest.Version)
	}
	desc := fmt.Sprintf("chartkeeper: %s", s.dec.Message)
	if d := s.steer.uninstallDescription; d != "" {
		desc = d
	}
	var gone goneObjects
	err := s.e.helm.Uninstall(ctx, s.d.ref.Name, s.d.ref.Namespace, desc,
		helm.Guard{Timeout: s.t.Watch.Policy.Timeout, DisableHooks: s.steer.uninstallDisableHooks, As: s.user(), Deleted: gone.told,
			Redact: s.d.redact.Redact, Admit: admitScope(s.t.Watch.Scope, s.d.ref.Namespace)})
	if err == nil && s.o.Deleting && objs != nil {
		// No release is left (status.release goes): the objects of the
		// uninstalled revision are remembered as those of revision 0, for
		// the deletion to wait until they are gone.
		s.e.manifests.setOnly(releaseKey(s.d.ref), 0, objs)
		s.allGone = gone.all(objs)
	}
	return nil, err
}

// goneObjects are the objects an uninstall deleted that the API server's
// answers said are gone (Guard.Deleted).
type goneObjects struct {
	mu  sync.Mutex
	set map[ownership.Placement]bool // kind, namespace and name only
}

func (g *goneObjects) told(p ownership.Placement, gone bool) {
	if !gone {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.set == nil {
		g.set = map[ownership.Placement]bool{}
	}
	p.ClusterScoped = false // an object's namespace ("" when cluster-scoped) tells
	g.set[p] = true
}

// all reports whether every object of objs the uninstall was to delete
// (all but those marked keep) is gone.
func (g *goneObjects) all(objs []object) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, ob := range objs {
		if !ob.kept() && !g.set[ownership.Placement{GVK: ob.GVK, Namespace: ob.Namespace, Name: ob.Name}] {
			return false
		}
	}
	return true
}

// deletionEnder is an action that can end the deletion of its resource
// in the step that ran it.
type deletionEnder interface {
	endsDeletion(s *step) bool
}

// endsDeletion reports whether the uninstall that just succeeded ends the
// deletion of its resource: Decide, shown that no release is left, says
// so, and the policy waits for no released objects to go, or the API
// server answered that each was gone (deleted at once; one with
// finalizers to run is only marked). The finalizer then goes in this
// reconcile, instead of after a trip through the work queue behind every
// resource deleted at the same time (make bench deletes a thousand at
// once: each one's finalizer went only after every uninstall).
func (uninstall) endsDeletion(s *step) bool {
	if !s.o.Deleting || s.t.Watch.Policy.UninstallWait && !s.allGone {
		return false
	}
	after := s.o
	after.Latest = nil
	return Decide(after, s.t.Watch.Policy).Finished
}

// succeeded: status.release and status.inventory cleared (nothing is
// released), Event and attempt UninstallSucceeded, Released False with the
// decision's reason; a remediation also sets Remediated True
// UninstallSucceeded.
func (u uninstall) succeeded(s *step, out outcome) {
	s.recordRevision(u, out)
	s.st.Inventory = nil
	done := "uninstalled: " + s.dec.Message
	s.eventf(false, api.ReasonUninstallSucceeded, "%s", done)
	s.attempted(u, out, api.AttemptSucceeded, api.ReasonUninstallSucceeded, done)
	if s.dec.Remediation {
		s.remediated(api.ReasonUninstallSucceeded, "uninstalled")
		return
	}
	s.releasedAsDecided()
}

// failed: not counted toward remediation, backed off (see backoff.go):
// Event and Released False UninstallFailed.
func (u uninstall) failed(s *step, out outcome, err error) bool {
	s.recordRevision(u, out)
	return s.failure(u, out, err, api.ReasonUninstallFailed, false)
}
