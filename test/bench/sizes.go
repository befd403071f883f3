package bench

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// sizeColumns are the rows of each size's table that the summary of sizes
// shows, under shorter headers.
var sizeColumns = []struct{ id, header string }{
	{rowInstallReady, "install Ready (s)"},
	{rowUpgradeReady, "upgrade Ready (s)"},
	{rowDeleteGone, "delete gone (s)"},
	{rowPeakRSS, "peak RSS (MiB)"},
	{rowRequestsPerCR, "requests per CR"},
}

// SizesTable is the compact summary of the sizes one invocation measured
// (BENCH_N=100,500,1000): a line per size and subject with the figures
// that matter at scale. For a scenario others published figures of, their
// figures come at their sizes too, marked as published elsewhere, with
// their sources and machines. "" for a single size with nothing
// published.
func SizesTable(results []*Result) string {
	if len(results) == 0 {
		return ""
	}
	first := results[0]
	pubs := published[first.Scenario]
	if len(results) == 1 && len(pubs) == 0 {
		return ""
	}
	type line struct {
		n     int
		who   string
		cells []string
	}
	var sizes []int
	for _, res := range results {
		sizes = append(sizes, res.N)
	}
	for _, p := range pubs {
		for _, f := range p.Figures {
			sizes = append(sizes, f.N)
		}
	}
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	column := func(id string) int {
		return slices.IndexFunc(sizeColumns, func(c struct{ id, header string }) bool { return c.id == id })
	}
	var lines []line
	for _, n := range sizes {
		for _, res := range results {
			if res.N != n {
				continue
			}
			summary := res.summarize()
			for _, name := range res.subjectNames() {
				cells := make([]string, len(sizeColumns))
				for j, c := range sizeColumns {
					cells[j] = rowByID(summary, c.id).figure(name).text(res.repeat())
				}
				lines = append(lines, line{n, name, cells})
			}
		}
		for i, p := range pubs {
			for _, f := range p.Figures {
				if f.N != n {
					continue
				}
				cells := slices.Repeat([]string{"-"}, len(sizeColumns))
				cells[column(rowInstallReady)] = number(f.InstallSeconds)
				if f.Approx {
					cells[column(rowInstallReady)] = "~" + number(f.InstallSeconds)
				}
				if f.PeakRSSMiB > 0 {
					cells[column(rowPeakRSS)] = number(f.PeakRSSMiB)
				}
				lines = append(lines, line{n, fmt.Sprintf("%s, published [%d]", p.Who, i+1), cells})
			}
		}
	}

	whoWidth := len("who")
	widths := make([]int, len(sizeColumns))
	for j, c := range sizeColumns {
		widths[j] = len(c.header) + 2
	}
	for _, l := range lines {
		whoWidth = max(whoWidth, utf8.RuneCountInString(l.who))
		for j, c := range l.cells {
			widths[j] = max(widths[j], utf8.RuneCountInString(c)+2)
		}
	}
	var b strings.Builder
	measured := make([]string, len(results))
	for i, res := range results {
		measured[i] = fmt.Sprint(res.N)
	}
	fmt.Fprintf(&b, "Sizes %s: scenario %s, concurrency %d", strings.Join(measured, ", "), first.Scenario, first.Concurrency)
	if first.repeat() > 1 {
		fmt.Fprintf(&b, ", median of %d runs (min–max) at each size", first.repeat())
	}
	b.WriteString("\n\n")
	fmt.Fprintf(&b, "%6s  %-*s", "N", whoWidth, "who")
	for j, c := range sizeColumns {
		fmt.Fprintf(&b, "%*s", widths[j], c.header)
	}
	b.WriteString("\n")
	for _, l := range lines {
		fmt.Fprintf(&b, "%6d  %-*s", l.n, whoWidth, l.who)
		for j, c := range l.cells {
			fmt.Fprintf(&b, "%*s", widths[j], c)
		}
		b.WriteString("\n")
	}
	ours := "this machine"
	if first.Machine != "" {
		ours += " (" + first.Machine + ")"
	}
	if len(pubs) == 0 {
		fmt.Fprintf(&b, "\nMeasured on %s.\n", ours)
		return b.String()
	}
	machines := make([]string, len(pubs))
	for i, p := range pubs {
		machines[i] = p.Machine
	}
	b.WriteString("\n" + wrap(fmt.Sprintf("The published lines were not measured here: they ran on other machines (%s); ours ran on %s. "+
		"Their install time, shown under install Ready, is the time they published for every release installed. No ratio is taken against them.",
		strings.Join(machines, "; "), ours), ""))
	for i, p := range pubs {
		as := make([]string, len(p.Figures))
		for j, f := range p.Figures {
			as[j] = f.AsPublished
		}
		b.WriteString(wrap(fmt.Sprintf("[%d] %s, concurrency %d, on %s: %s. Source: %s.", i+1, p.Who, p.Concurrency, p.Machine, strings.Join(as, "; "), p.Source), "    "))
	}
	return b.String()
}

// wrap breaks text into lines of at most 100 characters where it can, the
// lines after the first indented.
func wrap(text, indent string) string {
	var b strings.Builder
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > 100 {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != "" && line != indent {
			line += " "
		}
		line += w
	}
	return b.String() + line + "\n"
}

// rowByID returns the summary's row with that id (an empty one if none).
func rowByID(summary []SummaryRow, id string) SummaryRow {
	for _, r := range summary {
		if r.ID == id {
			return r
		}
	}
	return SummaryRow{}
}
