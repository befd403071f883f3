package scaffold

import (
	"errors"
	"fmt"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Options say what to package. Chart, Group, Version and Kind are required.
type Options struct {
	// ProjectDir is the project root, holding watches.yaml, charts/ and
	// internal/apps (default ".").
	ProjectDir string
	// Chart is a chart directory or .tgz archive.
	Chart string
	// Group, Version and Kind name the new kind (Group may not be empty).
	Group, Version, Kind string
	// Hook writes the kind's app, internal/apps/<kind>/hook.go (a Go hook
	// stub registered for the kind), unless that file exists, and
	// regenerates internal/apps/all. Default false.
	Hook bool
	// ServiceAccount, when set, makes the new kind's releases run as
	// that ServiceAccount (the watch's impersonate.serviceAccount, a
	// template such as "chartkeeper-release"); make manifests then writes
	// the ClusterRole to bind to it per namespace. Default: the
	// operator's own rights.
	ServiceAccount string
}

// Change is one file CreateAPI considered and what it did to it.
type Change struct {
	// Path is relative to the project directory.
	Path string
	// Action is "created", "updated" or "unchanged".
	Action string
}

func (c Change) String() string { return fmt.Sprintf("%-9s %s", c.Action, c.Path) }

// Result is what CreateAPI did; the caller ends it with Commit, or with
// Rollback when what follows (generating the manifests) fails.
type Result struct {
	Changes []Change
	undo    *undo
}

// Commit keeps the changes.
func (r *Result) Commit() error { return r.undo.commit() }

// Rollback puts back every file CreateAPI changed.
func (r *Result) Rollback() error { return r.undo.rollback() }

// CreateAPI copies the chart to charts/<chart name>, points the kind's
// watches.yaml entry at it (creating the entry, or moving an existing one
// to o.Version: the old version then stays served by the CRD) and writes
// the hook stub if asked. An error says which input is wrong; on an error
// nothing stays changed.
func CreateAPI(o Options) (*Result, error) {
	if o.ProjectDir == "" {
		o.ProjectDir = "."
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	ch, err := loader.Load(o.Chart)
	if err != nil {
		return nil, fmt.Errorf("--chart %s: %w", o.Chart, err)
	}
	rel := filepath.Join("charts", ch.Name())
	edit, err := addWatch(filepath.Join(o.ProjectDir, "watches.yaml"), o, rel)
	if err != nil {
		return nil, err
	}
	r := &Result{undo: &undo{}}
	fail := func(err error) (*Result, error) { return nil, errors.Join(err, r.Rollback()) }
	c, err := copyChart(ch, o.Chart, o.ProjectDir, rel, r.undo)
	if err != nil {
		return fail(err)
	}
	r.Changes = append(r.Changes, c)
	if err := edit.apply(r.undo); err != nil {
		return fail(err)
	}
	r.Changes = append(r.Changes, edit.Change)
	if o.Hook {
		cs, err := writeHook(o, r.undo)
		if err != nil {
			return fail(err)
		}
		r.Changes = append(r.Changes, cs...)
	}
	return r, nil
}

// undo records how to put files back.
type undo struct {
	steps, cleanups []func() error
}

func (u *undo) add(f func() error)     { u.steps = append(u.steps, f) }
func (u *undo) cleanup(f func() error) { u.cleanups = append(u.cleanups, f) }

func (u *undo) rollback() error {
	var errs []error
	for i := len(u.steps) - 1; i >= 0; i-- {
		errs = append(errs, u.steps[i]())
	}
	u.steps = nil
	return errors.Join(append(errs, u.commit())...)
}

func (u *undo) commit() error {
	var errs []error
	for _, f := range u.cleanups {
		errs = append(errs, f())
	}
	u.steps, u.cleanups = nil, nil
	return errors.Join(errs...)
}

func (o Options) validate() error {
	var errs []error
	if o.Chart == "" {
		errs = append(errs, errors.New("--chart is required: a chart directory or .tgz"))
	}
	if o.Group == "" {
		errs = append(errs, errors.New("--group is required (e.g. apps.example.com)"))
	} else if msgs := validation.IsDNS1123Subdomain(o.Group); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--group %q is not a DNS subdomain: %s", o.Group, msgs[0]))
	}
	if o.Version == "" {
		errs = append(errs, errors.New("--version is required (e.g. v1alpha1)"))
	} else if msgs := validation.IsDNS1035Label(o.Version); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--version %q is not a DNS label: %s", o.Version, msgs[0]))
	}
	if !watches.IsKindName(o.Kind) {
		errs = append(errs, fmt.Errorf("--kind %q must start with an upper-case letter and hold only letters and digits", o.Kind))
	} else if o.Hook && !validAppName(appName(o.Kind)) {
		errs = append(errs, fmt.Errorf("--kind %s cannot name an app folder (internal/apps/%s): choose another kind for --hook", o.Kind, appName(o.Kind)))
	}
	return errors.Join(errs...)
}
