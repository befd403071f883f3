package bench

import (
	"fmt"
	"strings"
)

// row is one line of the table: a label and how to read it from a subject.
type row struct {
	label string
	value func(SubjectResult) (v float64, ok bool, incomplete bool)
	unit  string
}

func milestoneRow(label, phase, milestone string) row {
	return row{label: label, unit: "s", value: func(s SubjectResult) (float64, bool, bool) {
		p := s.phase(phase)
		m := p.milestone(milestone)
		if m == nil {
			return 0, false, false
		}
		if m.Seconds == nil {
			return p.Seconds, true, true
		}
		return *m.Seconds, true, false
	}}
}

func phaseCostRow(label, phase string, cpu bool) row {
	return row{label: label, value: func(s SubjectResult) (float64, bool, bool) {
		p := s.phase(phase)
		if p == nil {
			return 0, false, false
		}
		if cpu {
			if p.CPUSeconds == nil {
				return 0, false, false
			}
			return *p.CPUSeconds, true, !p.Complete
		}
		return p.APIRequests, true, !p.Complete
	}}
}

// workPhases are the phases with work to do: their costs are summed.
var workPhases = []string{PhaseInstall, PhaseUpgrade, PhaseDelete}

func workCost(s SubjectResult, cpu bool) (float64, bool, bool) {
	var sum float64
	incomplete := false
	for _, name := range workPhases {
		p := s.phase(name)
		if p == nil {
			return 0, false, false
		}
		if cpu {
			if p.CPUSeconds == nil {
				return 0, false, false
			}
			sum += *p.CPUSeconds
		} else {
			sum += p.APIRequests
		}
		incomplete = incomplete || !p.Complete
	}
	return sum, true, incomplete
}

func (res *Result) rows() []row {
	return []row{
		milestoneRow("install: all deployed (s)", PhaseInstall, MilestoneDeployed),
		milestoneRow("install: all Ready (s)", PhaseInstall, MilestoneReady),
		milestoneRow("upgrade: all at revision 2 (s)", PhaseUpgrade, MilestoneDeployed),
		milestoneRow("upgrade: all Ready (s)", PhaseUpgrade, MilestoneReady),
		milestoneRow("delete: all gone (s)", PhaseDelete, MilestoneGone),
		phaseCostRow(fmt.Sprintf("idle %gs: CPU seconds", res.IdleSeconds), PhaseIdle, true),
		phaseCostRow(fmt.Sprintf("idle %gs: API requests", res.IdleSeconds), PhaseIdle, false),
		{label: "CPU seconds (install+upgrade+delete)", value: func(s SubjectResult) (float64, bool, bool) { return workCost(s, true) }},
		{label: "peak RSS (MiB)", value: func(s SubjectResult) (float64, bool, bool) {
			if s.PeakRSSBytes == nil {
				return 0, false, false
			}
			return float64(*s.PeakRSSBytes) / (1 << 20), true, false
		}},
		{label: "API requests per CR (install+upgrade+delete)", value: func(s SubjectResult) (float64, bool, bool) {
			v, ok, inc := workCost(s, false)
			return v / float64(res.N), ok, inc
		}},
	}
}

// ratio is a column dividing one subject's value by another's.
type ratio struct {
	label    string
	num, den int
}

// Table is the one-screen summary: a column per subject, then chartkeeper
// against the floor and each peer against chartkeeper. A value marked ">"
// is a phase that did not finish: the time it ran before giving up.
func (res *Result) Table() string {
	ck, fl := -1, -1
	for i, s := range res.Subjects {
		switch {
		case s.Name == SubjectChartkeeper && ck < 0:
			ck = i
		case s.Command == nil && fl < 0:
			fl = i
		}
	}
	var ratios []ratio
	if ck >= 0 && fl >= 0 {
		ratios = append(ratios, ratio{res.Subjects[ck].Name + "/" + res.Subjects[fl].Name, ck, fl})
	}
	for i, s := range res.Subjects {
		if ck >= 0 && i != ck && i != fl {
			ratios = append(ratios, ratio{s.Name + "/" + res.Subjects[ck].Name, i, ck})
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "N=%d custom resources in %d namespaces, concurrency %d", res.N, res.Namespaces, res.Concurrency)
	if res.Machine != "" {
		fmt.Fprintf(&b, "; %s", res.Machine)
	}
	b.WriteString("\n\n")
	const labelWidth, colWidth = 46, 15
	fmt.Fprintf(&b, "%-*s", labelWidth, "")
	for _, s := range res.Subjects {
		fmt.Fprintf(&b, "%*s", colWidth, s.Name)
	}
	for _, r := range ratios {
		fmt.Fprintf(&b, "%*s", max(colWidth, len(r.label)+2), r.label)
	}
	b.WriteString("\n")
	for _, r := range res.rows() {
		fmt.Fprintf(&b, "%-*s", labelWidth, r.label)
		for _, s := range res.Subjects {
			v, ok, inc := r.value(s)
			fmt.Fprintf(&b, "%*s", colWidth, cell(v, ok, inc))
		}
		for _, q := range ratios {
			n, okN, incN := r.value(res.Subjects[q.num])
			d, okD, incD := r.value(res.Subjects[q.den])
			text := "-"
			if okN && okD && d > 0 && !incN && !incD {
				text = fmt.Sprintf("%.2fx", n/d)
			}
			fmt.Fprintf(&b, "%*s", max(colWidth, len(q.label)+2), text)
		}
		b.WriteString("\n")
	}
	for _, s := range res.Subjects {
		if s.Error != "" {
			fmt.Fprintf(&b, "\n%s: %s", s.Name, s.Error)
		}
	}
	return b.String() + "\n"
}

func cell(v float64, ok, incomplete bool) string {
	if !ok {
		return "-"
	}
	s := fmt.Sprintf("%.1f", v)
	if v != 0 && v < 1 {
		s = fmt.Sprintf("%.2f", v)
	}
	if incomplete {
		return ">" + s
	}
	return s
}
