package bench

import (
	"fmt"
	"slices"
)

// SummaryRow is one row of the table over every run: each subject's
// figure and the ratios between subjects.
type SummaryRow struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Figures has one entry per subject that has this figure, in column order.
	Figures []Figure `json:"figures"`
	// Ratios divide one subject's median by another's; absent when either
	// comes from a phase that did not finish.
	Ratios []RatioFigure `json:"ratios,omitempty"`
}

// Figure is one subject's value of a row over the runs that measured it.
type Figure struct {
	Subject string  `json:"subject"`
	Median  float64 `json:"median"`
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
	// Runs is how many runs measured it.
	Runs int `json:"runs"`
	// Incomplete is set when a run's phase did not finish: its value is
	// the time the phase ran before giving up, a lower bound.
	Incomplete bool `json:"incomplete,omitempty"`
}

// RatioFigure is a ratio of two subjects' medians.
type RatioFigure struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// spread is the median, minimum and maximum of values (at least one).
// The median of an even count is the mean of the middle two.
func spread(values []float64) Figure {
	v := slices.Clone(values)
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return Figure{Median: med, Min: v[0], Max: v[n-1], Runs: n}
}

// median of values; 0 for none.
func median(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	return spread(values).Median
}

// subjectNames are the subjects' names in the order they first ran: the
// table's columns.
func (res *Result) subjectNames() []string {
	var names []string
	for _, s := range res.Subjects {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	return names
}

// runsOf returns every run's measurements of the named subject.
func (res *Result) runsOf(name string) []SubjectResult {
	var out []SubjectResult
	for _, s := range res.Subjects {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// repeat is how many runs were asked for.
func (res *Result) repeat() int { return max(res.Repeat, 1) }

// ratio is a column dividing one subject's median by another's.
type ratio struct {
	label    string
	num, den string
}

// ratios are chartkeeper against the floor, then each peer against
// chartkeeper.
func (res *Result) ratios(names []string) []ratio {
	ck, fl := "", ""
	for _, s := range res.Subjects {
		switch {
		case s.Name == SubjectChartkeeper && ck == "":
			ck = s.Name
		case s.Command == nil && fl == "":
			fl = s.Name
		}
	}
	var out []ratio
	if ck != "" && fl != "" {
		out = append(out, ratio{ck + "/" + fl, ck, fl})
	}
	for _, n := range names {
		if ck != "" && n != ck && n != fl {
			out = append(out, ratio{n + "/" + ck, n, ck})
		}
	}
	return out
}

// summarize computes the table's figures over every run.
func (res *Result) summarize() []SummaryRow {
	names := res.subjectNames()
	ratios := res.ratios(names)
	var out []SummaryRow
	for _, r := range res.rows() {
		sr := SummaryRow{ID: r.id, Label: r.label}
		for _, name := range names {
			var vals []float64
			incomplete := false
			for _, s := range res.runsOf(name) {
				if v, ok, inc := r.value(s); ok {
					vals = append(vals, v)
					incomplete = incomplete || inc
				}
			}
			if len(vals) == 0 {
				continue
			}
			f := spread(vals)
			f.Subject, f.Incomplete = name, incomplete
			sr.Figures = append(sr.Figures, f)
		}
		for _, q := range ratios {
			if r.noRatio {
				break
			}
			n, d := sr.figure(q.num), sr.figure(q.den)
			if n != nil && d != nil && d.Median > 0 && !n.Incomplete && !d.Incomplete {
				sr.Ratios = append(sr.Ratios, RatioFigure{Label: q.label, Value: n.Median / d.Median})
			}
		}
		out = append(out, sr)
	}
	return out
}

// figure returns the subject's figure, or nil.
func (r SummaryRow) figure(subject string) *Figure {
	for i := range r.Figures {
		if r.Figures[i].Subject == subject {
			return &r.Figures[i]
		}
	}
	return nil
}

// ratio returns the named ratio's text, "-" when it is not defined.
func (r SummaryRow) ratio(label string) string {
	for _, q := range r.Ratios {
		if q.Label == label {
			return fmt.Sprintf("%.2fx", q.Value)
		}
	}
	return "-"
}

// text is how the table shows a figure: the value of a single run as it
// always was, and with several runs the median, then min–max (and how
// many runs had it when some did not).
func (f *Figure) text(repeat int) string { return f.textAs(repeat, number) }

// textAs is text with the values formatted by format.
func (f *Figure) textAs(repeat int, format func(float64) string) string {
	if f == nil {
		return "-"
	}
	s := format(f.Median)
	if f.Incomplete {
		s = ">" + s
	}
	if repeat <= 1 {
		return s
	}
	s += " (" + format(f.Min) + "–" + format(f.Max)
	switch {
	case f.Runs == 1:
		s += ", 1 run"
	case f.Runs < repeat:
		s += fmt.Sprintf(", %d runs", f.Runs)
	}
	return s + ")"
}
