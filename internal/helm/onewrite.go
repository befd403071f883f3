package helm

import (
	"encoding/json"
	"errors"
	"strconv"
	"sync"

	"helm.sh/helm/v3/pkg/chart"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// oneWriteDriver stores an action's revision once, with its outcome, when
// nothing can happen between Helm's "in progress" write and its last one.
//
// Helm writes a revision as pending (pending-install, -upgrade,
// -rollback; uninstalling) before it applies anything, and again with the
// outcome when it is done. The pending record is Helm's lock and its
// trace while hooks run or while it waits for readiness. chartkeeper runs
// Helm without --wait (readiness is its own, afterwards), so for a
// revision without hooks the two writes are a few milliseconds apart, the
// first read by nobody: make bench counted 2 release writes per install
// and 3 per upgrade, each a whole release record written to etcd.
//
// So a pending revision without hooks is held in memory for the action and
// written when Helm records the outcome (an uninstalling one is not written
// at all when the revision is then deleted). Reads within the action see
// it. Only a revision whose objects all carry an ownerReference to the
// custom resource (or are kept) is held: should the process die in
// between, the objects applied without their record are found again by
// the next attempt (Helm's install adopts the objects labelled as this
// release's; an upgrade patches the objects of the previous revision to
// the new one and takes over those it finds), and if the resource is
// deleted first, the garbage collector removes them with it. What an
// action leaves held (it never recorded an outcome) is written by flush
// when it returns.
type oneWriteDriver struct {
	driver.Driver
	// covered says whether the action's revision can be found again without
	// its record (Request.Covered); nil: only an uninstall's is held.
	covered func() bool
	mu      sync.Mutex
	held    map[string]heldRevision // by storage key
	// writeErr: the writes of held revisions that failed.
	writeErr error
}

// heldRevision is a revision not written yet; stored says whether an
// earlier version of it is (so that writing it is an update).
type heldRevision struct {
	rls    *release.Release
	stored bool
}

func newOneWriteDriver(d driver.Driver) *oneWriteDriver {
	return &oneWriteDriver{Driver: d, held: map[string]heldRevision{}}
}

// holdable: an in-progress revision with no hook (nothing waits between
// its writes): an uninstalling one (its stored record still names every
// object), or a pending one whose objects all go with the custom resource
// or are kept, so that none is left behind should the record never be
// written.
func (d *oneWriteDriver) holdable(rls *release.Release) bool {
	if rls.Info == nil || len(rls.Hooks) > 0 {
		return false
	}
	switch {
	case rls.Info.Status == release.StatusUninstalling:
		return true
	case rls.Info.Status.IsPending():
		return d.covered != nil && d.covered() && recordBound(rls) <= heldLimit
	}
	return false
}

// heldLimit bounds the revisions held: one that might not fit in a Secret
// is written first, as Helm does, so that its size is refused before
// anything is applied (sizedSecrets).
const heldLimit = SecretLimit / 2

// recordBound is an upper bound of a revision's JSON encoding, before
// compression: what Helm stores of its chart (templates, files, schema,
// values), its values and its manifest, and room for the rest. Stored
// gzip'd and base64'd, a revision within heldLimit takes at most 2/3 of
// a Secret.
func recordBound(rls *release.Release) int {
	n := 4096 + len(rls.Manifest) + jsonSize(rls.Config)
	if c := rls.Chart; c != nil {
		n += len(c.Schema) + jsonSize(c.Values)
		for _, f := range append(append([]*chart.File(nil), c.Templates...), c.Files...) {
			n += len(f.Name) + len(f.Data)*2 // JSON escapes ([]byte is base64: 4/3)
		}
	}
	return n
}

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return SecretLimit // unknown: too big to hold
	}
	return len(b)
}

func (d *oneWriteDriver) Create(key string, rls *release.Release) error {
	if !d.holdable(rls) {
		return d.Driver.Create(key, rls)
	}
	if _, err := d.Driver.Get(key); err == nil {
		return driver.ErrReleaseExists
	}
	d.hold(key, heldRevision{rls: rls})
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
		d.hold(key, heldRevision{rls: rls, stored: stored})
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
	if ok {
		return h.rls, nil
	}
	return d.Driver.Get(key)
}

func (d *oneWriteDriver) Delete(key string) (*release.Release, error) {
	if h, ok := d.take(key); ok && !h.stored {
		return h.rls, nil // never written
	}
	return d.Driver.Delete(key)
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
		if matches(h.rls, labels) {
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
		if filter(h.rls) {
			out = append(out, h.rls)
		}
	}
	return out, nil
}

// flush writes what an action left held, and returns the errors of the
// held revisions' writes.
func (d *oneWriteDriver) flush() error {
	d.mu.Lock()
	held, failed := d.held, d.writeErr
	d.held, d.writeErr = map[string]heldRevision{}, nil
	d.mu.Unlock()
	for key, h := range held {
		write := d.Driver.Create
		if h.stored {
			write = d.Driver.Update
		}
		failed = errors.Join(failed, write(key, h.rls))
	}
	return failed
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
