package helm

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// oneWriteDriver writes an uninstall once, with its outcome.
//
// Helm marks a revision "uninstalling" before it deletes the release's
// objects, and deletes the revisions when it is done: two writes nobody
// reads in between, since the stored record still names every object
// (make bench counted them in every delete). So an uninstalling revision
// is held in memory for the action: reads within the action see it, and
// it is never written when the revisions are then deleted. What an action
// leaves held (it never recorded an outcome) is written by flush when it
// returns.
//
// Revisions that apply objects (pending-install, -upgrade, -rollback) are
// written first, as Helm does: should the process die, or the API server
// be gone, before the outcome is recorded, the pending revision names what
// was applied, and the next action unlocks it and takes its manifest as
// what is live. (They were once held too: make chaos lost releases to it,
// an upgrade killed mid-apply leaving a Service port live that no stored
// revision named, so that every later three-way merge added the old port
// next to it; see TestAppliedObjectsOutliveALostOutcome.)
type oneWriteDriver struct {
	driver.Driver
	mu   sync.Mutex
	held map[string]heldRevision // by storage key
	// writeErr: the writes of held revisions that failed.
	writeErr error
}

// heldRevision is a revision not written yet; stored says whether an
// earlier version of it is (so that writing it is an update). A deleted
// one is a stored revision whose deletion is held (see Delete).
type heldRevision struct {
	rls    *release.Release
	stored bool
	// uninstall: held for an uninstall (its holdable record, or a
	// deletion); Helm marks the record uninstalled in memory before it
	// deletes the history, so the flag, not the status, tells.
	uninstall bool
	deleted   bool
}

func newOneWriteDriver(d driver.Driver) *oneWriteDriver {
	return &oneWriteDriver{Driver: d, held: map[string]heldRevision{}}
}

// holdable: an uninstalling revision without hooks (its stored record
// still names every object, and nothing runs before it is deleted).
func (d *oneWriteDriver) holdable(rls *release.Release) bool {
	return rls.Info != nil && rls.Info.Status == release.StatusUninstalling && len(rls.Hooks) == 0
}

func (d *oneWriteDriver) Create(key string, rls *release.Release) error {
	if !d.holdable(rls) {
		return d.Driver.Create(key, rls)
	}
	if _, err := d.Driver.Get(key); err == nil {
		return driver.ErrReleaseExists
	}
	d.hold(key, heldRevision{rls: rls, uninstall: true})
	return nil
}

func (d *oneWriteDriver) hold(key string, h heldRevision) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.held[key] = h
}

// take removes and returns what is held for key.
func (d *oneWriteDriver) take(key string) (heldRevision, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h, ok := d.held[key]
	delete(d.held, key)
	return h, ok
}

func (d *oneWriteDriver) Update(key string, rls *release.Release) error {
	h, wasHeld := d.take(key)
	stored := !wasHeld || h.stored
	switch {
	case d.holdable(rls):
		d.hold(key, heldRevision{rls: rls, stored: stored, uninstall: true})
		return nil
	case stored && wasHeld:
		return d.wrote(d.Driver.Update(key, rls))
	case stored:
		return d.Driver.Update(key, rls)
	}
	return d.wrote(d.Driver.Create(key, rls))
}

// wrote keeps the error of a held revision's write: Helm only logs a
// failure to record an install's outcome, so flush reports it.
func (d *oneWriteDriver) wrote(err error) error {
	if err != nil {
		d.mu.Lock()
		d.writeErr = errors.Join(d.writeErr, err)
		d.mu.Unlock()
	}
	return err
}

func (d *oneWriteDriver) Get(key string) (*release.Release, error) {
	d.mu.Lock()
	h, ok := d.held[key]
	d.mu.Unlock()
	switch {
	case ok && h.deleted:
		return nil, driver.ErrReleaseNotFound
	case ok:
		return h.rls, nil
	}
	return d.Driver.Get(key)
}

// Delete deletes a revision. In an uninstall whose revision is held (one
// without hooks), the deletion is held too: Helm then deletes every
// revision of the release one by one, and flush deletes them together
// (see historyPurger).
func (d *oneWriteDriver) Delete(key string) (*release.Release, error) {
	h, ok := d.take(key)
	switch {
	case ok && h.deleted:
		d.hold(key, h) // its deletion stays held
		return nil, driver.ErrReleaseNotFound
	case ok && !h.stored:
		return h.rls, nil // never written
	case ok:
		d.hold(key, heldRevision{rls: h.rls, stored: true, uninstall: true, deleted: true})
		return h.rls, nil
	}
	if !d.uninstalling(key) {
		return d.Driver.Delete(key)
	}
	rls, err := d.Driver.Get(key)
	if err != nil {
		return nil, err
	}
	d.hold(key, heldRevision{rls: rls, stored: true, uninstall: true, deleted: true})
	return rls, nil
}

// uninstalling reports whether a revision of key's release is held for an
// uninstall.
func (d *oneWriteDriver) uninstalling(key string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, h := range d.held {
		if h.uninstall && sameRelease(k, key) {
			return true
		}
	}
	return false
}

// Query is the stored revisions with the held ones in their place.
func (d *oneWriteDriver) Query(labels map[string]string) ([]*release.Release, error) {
	stored, err := d.Driver.Query(labels)
	if err != nil && err != driver.ErrReleaseNotFound {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.held) == 0 {
		return stored, err
	}
	var out []*release.Release
	for _, r := range stored {
		if _, replaced := d.held[keyOf(r)]; !replaced {
			out = append(out, r)
		}
	}
	for _, h := range d.held {
		if !h.deleted && matches(h.rls, labels) {
			out = append(out, h.rls)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

func (d *oneWriteDriver) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	stored, err := d.Driver.List(filter)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*release.Release
	for _, r := range stored {
		if _, replaced := d.held[keyOf(r)]; !replaced {
			out = append(out, r)
		}
	}
	for _, h := range d.held {
		if !h.deleted && filter(h.rls) {
			out = append(out, h.rls)
		}
	}
	return out, nil
}

// flush writes what an action left held, deletes the revisions whose
// deletion it held, and returns the errors of those writes and deletions.
func (d *oneWriteDriver) flush() error {
	d.mu.Lock()
	held, failed := d.held, d.writeErr
	d.held, d.writeErr = map[string]heldRevision{}, nil
	d.mu.Unlock()
	deleted := map[string][]string{} // keys by release
	for key, h := range held {
		if h.deleted {
			deleted[h.rls.Name] = append(deleted[h.rls.Name], key)
			continue
		}
		write := d.Driver.Create
		if h.stored {
			write = d.Driver.Update
		}
		failed = errors.Join(failed, write(key, h.rls))
	}
	for name, keys := range deleted {
		slices.Sort(keys)
		failed = errors.Join(failed, d.deleteAll(name, keys))
	}
	return failed
}

// deleteAll deletes the given revisions of a release: in one request when
// the driver can (historyPurger), else one by one.
func (d *oneWriteDriver) deleteAll(name string, keys []string) error {
	if p, ok := d.Driver.(historyPurger); ok {
		return p.purge(name, keys)
	}
	return deleteEach(d.Driver, keys)
}

// deleteEach deletes revisions one by one; one already gone is no error
// (Helm's Secret driver passes on the API server's NotFound when the
// Secret went after its read).
func deleteEach(drv driver.Driver, keys []string) error {
	var failed error
	for _, key := range keys {
		if _, err := drv.Delete(key); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) && !apierrors.IsNotFound(err) {
			failed = errors.Join(failed, err)
		}
	}
	return failed
}

// sameRelease reports whether two storage keys name revisions of one
// release (sh.helm.release.v1.NAME.vN).
func sameRelease(a, b string) bool {
	trim := func(k string) string {
		if i := strings.LastIndex(k, ".v"); i > 0 {
			return k[:i]
		}
		return k
	}
	return trim(a) == trim(b)
}

// keyOf is Helm's storage key of a revision.
func keyOf(r *release.Release) string {
	return "sh.helm.release.v1." + r.Name + ".v" + strconv.Itoa(r.Version)
}

// matches applies a Helm storage query (labels name, owner, status,
// version) to a held revision.
func matches(r *release.Release, labels map[string]string) bool {
	for k, v := range labels {
		switch k {
		case "name":
			if r.Name != v {
				return false
			}
		case "owner":
			if v != "helm" {
				return false
			}
		case "status":
			if r.Info == nil || string(r.Info.Status) != v {
				return false
			}
		case "version":
			if strconv.Itoa(r.Version) != v {
				return false
			}
		default:
			if r.Labels[k] != v {
				return false
			}
		}
	}
	return true
}
