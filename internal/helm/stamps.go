package helm

import (
	"maps"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// What the release storage stamps on every revision it writes, from what
// Helm's action wrote: labels on the release Secret (and on the chunked
// driver's index Secret), read back by Revisions without decoding.
//
// Helm keeps no history of a revision's statuses: a failed rollback marks
// the failed upgrade before it "superseded" (as if it had been deployed)
// and rewrites its own description to `Rollback "<name>" failed: …`. So
// the history is classified from these stamps, never from descriptions:
// a revision is a rollback target only if it was never recorded failed,
// and a failed revision made by a rollback is never rolled back.
const (
	// LabelMadeBy names the action that made the revision: the status it
	// was first written with (pending-install, -upgrade or -rollback).
	LabelMadeBy = "chartkeeper.dev/made-by"
	// LabelFailed is "true" on a revision once it was recorded failed; it
	// stays when Helm later marks the revision superseded.
	LabelFailed = "chartkeeper.dev/failed"
)

// MadeBy is the Helm action that made a revision.
type MadeBy string

// The actions a revision is made by; MadeByUnknown for a revision written
// before the storage stamped them, or by another tool.
const (
	MadeByUnknown  MadeBy = ""
	MadeByInstall  MadeBy = "install"
	MadeByUpgrade  MadeBy = "upgrade"
	MadeByRollback MadeBy = "rollback"
)

// madeByStatus is the action whose first write of a revision has status.
var madeByStatus = map[release.Status]MadeBy{
	release.StatusPendingInstall:  MadeByInstall,
	release.StatusPendingUpgrade:  MadeByUpgrade,
	release.StatusPendingRollback: MadeByRollback,
}

// MadeBy returns the action that made the revision.
func (r Revision) MadeBy() MadeBy {
	switch m := MadeBy(r.Labels[LabelMadeBy]); m {
	case MadeByInstall, MadeByUpgrade, MadeByRollback:
		return m
	}
	return MadeByUnknown
}

// Stamped reports whether the storage stamped the revision when it was
// made (so that the absence of LabelFailed means it never failed).
func (r Revision) Stamped() bool { return r.MadeBy() != MadeByUnknown }

// EverFailed reports whether the revision was recorded failed: it is
// failed now, or it was before Helm marked it superseded.
func (r Revision) EverFailed() bool {
	return r.Status == release.StatusFailed || r.Labels[LabelFailed] == "true"
}

// Deployed reports whether the revision was deployed: its status is
// deployed, or superseded after it was (not after it failed). A rollback
// may go back to it.
func (r Revision) Deployed() bool {
	switch r.Status {
	case release.StatusDeployed:
		return true
	case release.StatusSuperseded:
		return !r.EverFailed()
	}
	return false
}

// stampingDriver stamps each revision written through it (see LabelMadeBy
// and LabelFailed). Helm copies a revision's labels into the next one (an
// upgrade merges the last revision's, a rollback takes its target's): a
// new revision's stamps are set afresh, never inherited.
type stampingDriver struct{ driver.Driver }

func (d stampingDriver) Create(key string, rls *release.Release) error {
	stamp(rls, true)
	return d.Driver.Create(key, rls)
}

func (d stampingDriver) Update(key string, rls *release.Release) error {
	stamp(rls, false)
	return d.Driver.Update(key, rls)
}

// stamp sets the revision's stamps in a copy of its labels (Helm shares a
// rollback's label map with its target's revision). A revision created
// with another status than pending (a copy between storages) keeps its own.
func stamp(rls *release.Release, created bool) {
	if rls == nil || rls.Info == nil {
		return
	}
	labels := maps.Clone(rls.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	if m, ok := madeByStatus[rls.Info.Status]; ok && created { // a new revision of an action
		delete(labels, LabelFailed)
		labels[LabelMadeBy] = string(m)
	}
	if rls.Info.Status == release.StatusFailed {
		labels[LabelFailed] = "true"
	}
	rls.Labels = labels
}
