package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/scaffold"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// A decision is one choice create-api makes for the new kind's watch entry
// from its chart rendered once with the defaults and samples (renders:
// manifests.Render; w is the entry as
// it was before any decision). It writes its field unless the entry has
// one of its own (the user's, kept) and returns the lines saying what it
// decided and why (none when it changed nothing); notes about a kept field
// go to stderr.
type decision func(res *scaffold.Result, o scaffold.Options, w watches.Watch, renders []manifests.Rendered, stderr io.Writer) ([]string, error)

// decisions are create-api's, in the order it prints them.
var decisions = []decision{openScope, chooseStorage, setCRDPolicy}

// decide checks the generated sample against the generated CRD, then makes
// every decision for the new kind's entry.
func decide(res *scaffold.Result, o scaffold.Options, configDir string, files map[string][]byte, stderr io.Writer) ([]string, error) {
	if err := checkSample(o, files); err != nil {
		return nil, err
	}
	ws, err := watches.Load(filepath.Join(o.ProjectDir, "watches.yaml"))
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ws, func(w watches.Watch) bool { return w.Group == o.Group && w.Kind == o.Kind })
	if i < 0 {
		return nil, fmt.Errorf("watches.yaml: no entry for kind %s.%s", o.Kind, o.Group)
	}
	samples, err := manifests.SamplesOf(configDir, files)
	if err != nil {
		return nil, err
	}
	renders, err := manifests.Render(ws[i], samples)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, d := range decisions {
		l, err := d(res, o, ws[i], renders, stderr)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l...)
	}
	return lines, nil
}
