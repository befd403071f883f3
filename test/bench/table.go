package bench

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// row is one line of the table: a label and how to read it from a subject.
type row struct {
	// id names the row in result.json's summary and in SizesTable.
	id    string
	label string
	value func(SubjectResult) (v float64, ok bool, incomplete bool)
	unit  string
}

func milestoneRow(id, label, phase, milestone string) row {
	return row{id: id, label: label, unit: "s", value: func(s SubjectResult) (float64, bool, bool) {
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

func phaseCostRow(id, label, phase string, cpu bool) row {
	return row{id: id, label: label, value: func(s SubjectResult) (float64, bool, bool) {
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

// The rows' ids.
const (
	rowInstallDeployed = "install-deployed"
	rowInstallReady    = "install-ready"
	rowUpgradeDeployed = "upgrade-deployed"
	rowUpgradeReady    = "upgrade-ready"
	rowDeleteGone      = "delete-gone"
	rowIdleCPU         = "idle-cpu"
	rowIdleRequests    = "idle-requests"
	rowCPU             = "cpu"
	rowPeakRSS         = "peak-rss"
	rowRequestsPerCR   = "requests-per-cr"
)

func (res *Result) rows() []row {
	return []row{
		milestoneRow(rowInstallDeployed, "install: all deployed (s)", PhaseInstall, MilestoneDeployed),
		milestoneRow(rowInstallReady, "install: all Ready (s)", PhaseInstall, MilestoneReady),
		milestoneRow(rowUpgradeDeployed, "upgrade: all at revision 2 (s)", PhaseUpgrade, MilestoneDeployed),
		milestoneRow(rowUpgradeReady, "upgrade: all Ready (s)", PhaseUpgrade, MilestoneReady),
		milestoneRow(rowDeleteGone, "delete: all gone (s)", PhaseDelete, MilestoneGone),
		phaseCostRow(rowIdleCPU, fmt.Sprintf("idle %gs: CPU seconds", res.IdleSeconds), PhaseIdle, true),
		phaseCostRow(rowIdleRequests, fmt.Sprintf("idle %gs: API requests", res.IdleSeconds), PhaseIdle, false),
		{id: rowCPU, label: "CPU seconds (install+upgrade+delete)", value: func(s SubjectResult) (float64, bool, bool) { return workCost(s, true) }},
		{id: rowPeakRSS, label: "peak RSS (MiB)", value: func(s SubjectResult) (float64, bool, bool) {
			if s.PeakRSSBytes == nil {
				return 0, false, false
			}
			return float64(*s.PeakRSSBytes) / (1 << 20), true, false
		}},
		{id: rowRequestsPerCR, label: "API requests per CR (install+upgrade+delete)", value: func(s SubjectResult) (float64, bool, bool) {
			v, ok, inc := workCost(s, false)
			return v / float64(res.N), ok, inc
		}},
	}
}

// Table is the one-screen summary: a column per subject, then chartkeeper
// against the floor and each peer against chartkeeper. A value marked ">"
// is a phase that did not finish: the time it ran before giving up. With
// several runs each value is the median, followed by the spread (min–max),
// and ratios are of medians.
func (res *Result) Table() string {
	names := res.subjectNames()
	ratios := res.ratios(names)
	summary := res.summarize()
	// The cells first, so that every column is as wide as its widest.
	const labelWidth = 46
	header := slices.Clone(names)
	for _, q := range ratios {
		header = append(header, q.label)
	}
	widths := make([]int, len(header))
	for j, h := range header {
		widths[j] = max(15, utf8.RuneCountInString(h)+2)
	}
	cells := make([][]string, len(summary))
	for i, row := range summary {
		for _, n := range names {
			cells[i] = append(cells[i], row.figure(n).text(res.repeat()))
		}
		for _, q := range ratios {
			cells[i] = append(cells[i], row.ratio(q.label))
		}
		for j, c := range cells[i] {
			widths[j] = max(widths[j], utf8.RuneCountInString(c)+2)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "N=%d custom resources in %d namespaces, concurrency %d", res.N, res.Namespaces, res.Concurrency)
	if res.Scenario != "" && res.Scenario != ScenarioDefault {
		fmt.Fprintf(&b, ", scenario %s", res.Scenario)
	}
	if res.repeat() > 1 {
		fmt.Fprintf(&b, ", median of %d runs (min–max)", res.repeat())
	}
	if res.Machine != "" {
		fmt.Fprintf(&b, "; %s", res.Machine)
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%-*s", labelWidth, "")
	for j, h := range header {
		fmt.Fprintf(&b, "%*s", widths[j], h)
	}
	b.WriteString("\n")
	for i, row := range summary {
		fmt.Fprintf(&b, "%-*s", labelWidth, row.Label)
		for j, c := range cells[i] {
			fmt.Fprintf(&b, "%*s", widths[j], c)
		}
		b.WriteString("\n")
	}
	for _, s := range res.Subjects {
		if s.Error == "" {
			continue
		}
		if res.repeat() > 1 {
			fmt.Fprintf(&b, "\n%s (run %d): %s", s.Name, s.Run, s.Error)
		} else {
			fmt.Fprintf(&b, "\n%s: %s", s.Name, s.Error)
		}
	}
	return b.String() + "\n"
}

func cell(v float64, ok, incomplete bool) string {
	if !ok {
		return "-"
	}
	if incomplete {
		return ">" + number(v)
	}
	return number(v)
}

// number is a value as the table shows it: one decimal, two below 1.
func number(v float64) string {
	if v != 0 && v < 1 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
