package bench

import (
	"fmt"
	"sort"
	"strings"
)

// Breakdown is the part of the table that says where an operator's API
// requests went: per custom resource, by verb and resource, for each work
// phase (from the operator's own chartkeeper_api_requests_total); with
// several runs, the median of each. Subjects that do not report it are
// left out; "" when none does.
func (res *Result) Breakdown() string {
	var b strings.Builder
	for _, name := range res.subjectNames() {
		runs := res.runsOf(name)
		kinds := map[string]bool{}
		for _, s := range runs {
			for _, phase := range workPhases {
				if p := s.phase(phase); p != nil {
					for k := range p.RequestsByKind {
						kinds[k] = true
					}
				}
			}
		}
		if len(kinds) == 0 {
			continue
		}
		keys := make([]string, 0, len(kinds))
		for k := range kinds {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "\n%s: API requests per CR by verb and resource (its own count", name)
		if res.repeat() > 1 {
			fmt.Fprintf(&b, ", median of %d runs", len(runs))
		}
		fmt.Fprintf(&b, ")\n%-46s", "")
		for _, phase := range workPhases {
			fmt.Fprintf(&b, "%10s", phase)
		}
		b.WriteString("\n")
		totals := make([]float64, len(workPhases))
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-44s", k)
			for i, phase := range workPhases {
				vals := make([]float64, len(runs))
				for j, s := range runs {
					vals[j] = s.phase(phase).requests(k) / float64(res.N)
				}
				v := median(vals)
				totals[i] += v
				fmt.Fprintf(&b, "%10.2f", v)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  %-44s", "total")
		for _, t := range totals {
			fmt.Fprintf(&b, "%10.2f", t)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// requests is a phase's count of one kind of request (0 for a nil phase).
func (p *Phase) requests(kind string) float64 {
	if p == nil {
		return 0
	}
	return p.RequestsByKind[kind]
}
