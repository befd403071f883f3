package bench

import (
	"fmt"
	"runtime"
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
	// percent shows the row's values as percentages: no decimals from 10 on.
	percent bool
	// joinNext, when set, is the table's label of one line showing this
	// row and the next, each cell (and ratio) being this row's, " / ",
	// the next one's. result.json's summary keeps them apart.
	joinNext string
	// noRatio: the row is a count to read as it is, not a cost to compare.
	noRatio bool
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
	if cpu {
		return workSum(s, operatorCPU)
	}
	return workSum(s, func(p *Phase) *float64 { return &p.APIRequests })
}

// workSum adds up one figure of each work phase; not ok if a phase or its
// figure is missing.
func workSum(s SubjectResult, figure func(*Phase) *float64) (float64, bool, bool) {
	var sum float64
	incomplete := false
	for _, name := range workPhases {
		p := s.phase(name)
		if p == nil {
			return 0, false, false
		}
		v := figure(p)
		if v == nil {
			return 0, false, false
		}
		sum += *v
		incomplete = incomplete || !p.Complete
	}
	return sum, true, incomplete
}

// workShare is a CPU figure of the work phases as a share of what the
// machine's cpus could have done in their wall time, in percent.
func workShare(s SubjectResult, cpus int, figure func(*Phase) *float64) (float64, bool, bool) {
	cpu, ok, incomplete := workSum(s, figure)
	if !ok {
		return 0, false, false
	}
	wall, _, _ := workSum(s, func(p *Phase) *float64 { return &p.Seconds })
	if wall <= 0 || cpus < 1 {
		return 0, false, false
	}
	return 100 * cpu / (wall * float64(cpus)), true, incomplete
}

func operatorCPU(p *Phase) *float64       { return p.CPUSeconds }
func controlPlaneCPUOf(p *Phase) *float64 { return p.ControlPlaneCPUSeconds }

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
	rowControlPlaneCPU = "control-plane-cpu"
	rowCPUShare        = "cpu-share"
	rowControlShare    = "control-plane-cpu-share"
	rowPeakRSS         = "peak-rss"
	rowRequestsPerCR   = "requests-per-cr"
	rowWatchesCutOff   = "watches-cut-off"
)

func (res *Result) rows() []row {
	cpus := res.cpus()
	cores := fmt.Sprintf("share of the %d cores used", cpus)
	if cpus == 1 {
		cores = "share of the core used"
	}
	return []row{
		milestoneRow(rowInstallDeployed, "install: all deployed (s)", PhaseInstall, MilestoneDeployed),
		milestoneRow(rowInstallReady, "install: all Ready (s)", PhaseInstall, MilestoneReady),
		milestoneRow(rowUpgradeDeployed, "upgrade: all at revision 2 (s)", PhaseUpgrade, MilestoneDeployed),
		milestoneRow(rowUpgradeReady, "upgrade: all Ready (s)", PhaseUpgrade, MilestoneReady),
		milestoneRow(rowDeleteGone, "delete: all gone (s)", PhaseDelete, MilestoneGone),
		phaseCostRow(rowIdleCPU, fmt.Sprintf("idle %gs: CPU seconds", res.IdleSeconds), PhaseIdle, true),
		phaseCostRow(rowIdleRequests, fmt.Sprintf("idle %gs: API requests", res.IdleSeconds), PhaseIdle, false),
		{id: rowCPU, label: "CPU seconds (install+upgrade+delete)", value: func(s SubjectResult) (float64, bool, bool) { return workCost(s, true) }},
		{id: rowControlPlaneCPU, label: "control plane CPU seconds (install+upgrade+delete)", value: func(s SubjectResult) (float64, bool, bool) {
			return workSum(s, controlPlaneCPUOf)
		}},
		{id: rowCPUShare, label: cores + ", operator (%)", percent: true, joinNext: cores + ", operator / control plane (%)",
			value: func(s SubjectResult) (float64, bool, bool) { return workShare(s, cpus, operatorCPU) }},
		{id: rowControlShare, label: cores + ", control plane (%)", percent: true,
			value: func(s SubjectResult) (float64, bool, bool) { return workShare(s, cpus, controlPlaneCPUOf) }},
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
		{id: rowWatchesCutOff, label: "watches the API server cut off (install+upgrade+delete)", noRatio: true,
			value: func(s SubjectResult) (float64, bool, bool) {
				return workSum(s, func(p *Phase) *float64 { return &p.WatchesCutOff })
			}},
	}
}

// Table is the one-screen summary: a column per subject, then chartkeeper
// against the floor and each peer against chartkeeper. A value marked ">"
// is a phase that did not finish: the time it ran before giving up. With
// several runs each value is the median, followed by the spread (min–max),
// and ratios are of medians. A line may show two figures, "a / b"; "-"
// stands for one that is missing.
func (res *Result) Table() string {
	names := res.subjectNames()
	ratios := res.ratios(names)
	summary := res.summarize()
	rows := res.rows() // summary[i] is rows[i]'s
	// The cells first, so that every column is as wide as its widest.
	header := slices.Clone(names)
	for _, q := range ratios {
		header = append(header, q.label)
	}
	widths := make([]int, len(header))
	for j, h := range header {
		widths[j] = max(15, utf8.RuneCountInString(h)+2)
	}
	rowCells := func(i int) []string {
		var out []string
		for _, n := range names {
			f := summary[i].figure(n)
			if rows[i].percent {
				out = append(out, f.textAs(res.repeat(), percent))
			} else {
				out = append(out, f.text(res.repeat()))
			}
		}
		for _, q := range ratios {
			out = append(out, summary[i].ratio(q.label))
		}
		return out
	}
	var labels []string
	var cells [][]string
	for i := 0; i < len(summary); i++ {
		label, c := summary[i].Label, rowCells(i)
		if rows[i].joinNext != "" && i+1 < len(summary) {
			label, c = rows[i].joinNext, joinCells(c, rowCells(i+1))
			i++
		}
		labels, cells = append(labels, label), append(cells, c)
	}
	labelWidth := 46
	for i, l := range labels {
		labelWidth = max(labelWidth, utf8.RuneCountInString(l)+2)
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
	for i, label := range labels {
		fmt.Fprintf(&b, "%-*s", labelWidth, label)
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

// joinCells shows two rows' cells in one: "a / b", or "-" when neither
// has a figure.
func joinCells(a, b []string) []string {
	out := make([]string, len(a))
	for j := range a {
		out[j] = a[j] + " / " + b[j]
		if a[j] == "-" && b[j] == "-" {
			out[j] = "-"
		}
	}
	return out
}

// number is a value as the table shows it: one decimal, two below 1.
func number(v float64) string {
	if v != 0 && v < 1 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// percent is a percentage as the table shows it: no decimals from 10 on,
// one below (two below 1).
func percent(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return number(v)
}

// cpus is the number of CPUs the shares of the cores are of: the
// measuring machine's, or this one's for a result that does not say.
func (res *Result) cpus() int {
	if res.CPUs > 0 {
		return res.CPUs
	}
	return runtime.NumCPU()
}
