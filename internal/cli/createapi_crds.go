package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/scaffold"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// setCRDPolicy writes `crds: {policy: create}` into the new kind's
// watches.yaml entry when its chart ships CRDs (in crds/ or in templates
// rendered with the defaults and samples), unless the entry has a crds
// field of its own. It returns the lines saying what it decided and why
// (none when it changed nothing).
func setCRDPolicy(res *scaffold.Result, o scaffold.Options, w watches.Watch, renders []manifests.Rendered, _ io.Writer) ([]string, error) {
	names := manifests.ChartCRDNames(w, renders)
	if len(names) == 0 {
		return nil, nil
	}
	c, own, err := res.SetCRDPolicy(o, watches.CRDPolicyCreate)
	if err != nil || own || c.Action == "unchanged" {
		return nil, err
	}
	return []string{fmt.Sprintf("  set crds.policy %s: the chart ships CRDs (%s): chartkeeper creates the missing ones before each install or upgrade "+
		"and never replaces or deletes one (skip: install them yourself; create-and-replace: also take the chart's changes to them when they break no custom resource)",
		watches.CRDPolicyCreate, strings.Join(names, ", "))}, nil
}
