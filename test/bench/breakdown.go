package bench

import (
	"fmt"
	"sort"
	"strings"
)

// Breakdown is the part of the table that says where an operator's API
// requests went: per custom resource, by verb and resource, for each work
// phase (from the operator's own chartkeeper_api_requests_total). Subjects
// that do not report it are left out; "" when none does.
func (res *Result) Breakdown() string {
	var b strings.Builder
	for _, s := range res.Subjects {
		kinds := map[string]bool{}
		for _, name := range workPhases {
			if p := s.phase(name); p != nil {
				for k := range p.RequestsByKind {
					kinds[k] = true
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
		fmt.Fprintf(&b, "\n%s: API requests per CR by verb and resource (its own count)\n", s.Name)
		fmt.Fprintf(&b, "%-46s", "")
		for _, name := range workPhases {
			fmt.Fprintf(&b, "%10s", name)
		}
		b.WriteString("\n")
		totals := make([]float64, len(workPhases))
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-44s", k)
			for i, name := range workPhases {
				v := s.phase(name).requests(k) / float64(res.N)
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
