package scaffold

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Decisions are what create-api decided for the new kind's watches.yaml
// entry after the manifests were generated.
type Decisions struct {
	// Lines say what each decision wrote into the entry and why, in the
	// order the decisions are made (none when a decision changed nothing).
	Lines []string
	// Notes are about fields of the entry that are the user's, kept
	// although the chart asks for something else (create-api prints them
	// on stderr).
	Notes []string
}

// A decision is one choice for the new kind's watch entry from its chart
// rendered once with the defaults and samples (renders: manifests.Render;
// w is the entry as it was before any decision). It writes its field
// unless the entry has one of its own (the user's, kept) and adds to d the
// lines saying what it decided and why, or a note about a kept field.
type decision func(r *Result, o Options, w watches.Watch, renders []manifests.Rendered, d *Decisions) error

// decisions are create-api's, in the order it prints them.
var decisions = []decision{openScope, chooseStorage, setCRDPolicy}

// Decide checks the generated sample against the generated CRD (files are
// the manifests generated under configDir for the project's watches.yaml,
// as manifests.Generate returns them), then makes every decision for the
// kind's watches.yaml entry: scope, storage and CRD policy. When one is
// written, the watches.yaml change of r says "updated". On an error the
// Decisions hold the notes made before it; the caller rolls r back.
func (r *Result) Decide(o Options, configDir string, files map[string][]byte) (Decisions, error) {
	var d Decisions
	if o.ProjectDir == "" {
		o.ProjectDir = "."
	}
	if err := checkSample(o, files); err != nil {
		return d, err
	}
	ws, err := watches.Load(filepath.Join(o.ProjectDir, "watches.yaml"))
	if err != nil {
		return d, err
	}
	i := slices.IndexFunc(ws, func(w watches.Watch) bool { return w.Group == o.Group && w.Kind == o.Kind })
	if i < 0 {
		return d, fmt.Errorf("watches.yaml: no entry for kind %s.%s", o.Kind, o.Group)
	}
	samples, err := manifests.SamplesOf(configDir, files)
	if err != nil {
		return d, err
	}
	renders, err := manifests.Render(ws[i], samples)
	if err != nil {
		return d, err
	}
	for _, dec := range decisions {
		if err := dec(r, o, ws[i], renders, &d); err != nil {
			return d, err
		}
	}
	if len(d.Lines) > 0 {
		for i, c := range r.Changes {
			if c.Path == "watches.yaml" && c.Action == "unchanged" {
				r.Changes[i].Action = "updated"
			}
		}
	}
	return d, nil
}
