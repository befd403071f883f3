package soak

import (
	"fmt"
	"io"
	"math"
	"time"
)

// Sample is one row of soak.csv: the operator as seen at Elapsed since the
// churn began, and what happened since the previous sample.
type Sample struct {
	Elapsed time.Duration
	// RSSMiB is the operator's resident set (VmRSS); HeapMiB the Go heap
	// in use (go_memstats_heap_inuse_bytes).
	RSSMiB, HeapMiB float64
	// Goroutines and OpenFDs are go_goroutines and process_open_fds.
	Goroutines, OpenFDs float64
	// APIRate is the operator's API requests per second since the previous
	// sample; Reconciles the reconciles it ran since then; CPUPercent its
	// CPU time since then, in percent of one core.
	APIRate, Reconciles, CPUPercent float64
	// Live custom resources, and Ready ones (Ready for their generation).
	Live, Ready int
	// Changes the churn made since the previous sample.
	Changes int
}

// Series are the sampled quantities the verdict fits, in order; Gated ones
// fail the run when they grow.
var Series = []struct {
	Name  string
	Gated bool
	Value func(Sample) float64
}{
	{"RSS (MiB)", true, func(s Sample) float64 { return s.RSSMiB }},
	{"goroutines", true, func(s Sample) float64 { return s.Goroutines }},
	{"open fds", true, func(s Sample) float64 { return s.OpenFDs }},
	{"heap in use (MiB)", false, func(s Sample) float64 { return s.HeapMiB }},
	{"API requests/s", false, func(s Sample) float64 { return s.APIRate }},
}

// minPoints is the fewest samples in the second half a trend is fitted to.
const minPoints = 3

// Trend is the line fitted to the second half of one series.
type Trend struct {
	Series string
	Gated  bool
	// Points is the number of samples fitted; From the elapsed time the
	// second half starts at.
	Points int
	From   time.Duration
	// Mean of the fitted samples, the slope per hour, and the slope per
	// hour as a fraction of the mean (Relative).
	Mean, SlopePerHour, Relative float64
	// Grows: the fitted growth is over the bound (or there is too little
	// to fit); Why says so.
	Grows bool
	Why   string
}

// Fit returns the least-squares line y = a + b x.
func Fit(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	if len(xs) == 0 || len(xs) != len(ys) {
		return math.NaN(), math.NaN()
	}
	var sx, sy float64
	for i := range xs {
		sx, sy = sx+xs[i], sy+ys[i]
	}
	mx, my := sx/n, sy/n
	var sxx, sxy float64
	for i := range xs {
		sxx += (xs[i] - mx) * (xs[i] - mx)
		sxy += (xs[i] - mx) * (ys[i] - my)
	}
	if sxx == 0 {
		return my, 0
	}
	b = sxy / sxx
	return my - b*mx, b
}

// SecondHalf returns the samples taken at or after half the last sample's
// elapsed time.
func SecondHalf(samples []Sample) []Sample {
	if len(samples) == 0 {
		return nil
	}
	half := samples[len(samples)-1].Elapsed / 2
	for i, s := range samples {
		if s.Elapsed >= half {
			return samples[i:]
		}
	}
	return nil
}

// Judge fits a line to the second half of one series and says whether it
// grows by more than maxGrowth (a fraction of its mean) per hour.
func Judge(name string, gated bool, samples []Sample, value func(Sample) float64, maxGrowth float64) Trend {
	t := Trend{Series: name, Gated: gated}
	half := SecondHalf(samples)
	t.Points = len(half)
	if len(half) < minPoints {
		t.Grows, t.Why = true, fmt.Sprintf("%d samples in the second half, %d needed to fit a line", len(half), minPoints)
		return t
	}
	t.From = half[0].Elapsed
	xs, ys := make([]float64, len(half)), make([]float64, len(half))
	for i, s := range half {
		xs[i], ys[i] = s.Elapsed.Hours(), value(s)
	}
	a, b := Fit(xs, ys)
	t.SlopePerHour = b
	t.Mean = a + b*mean(xs)
	switch {
	case t.Mean > 0:
		t.Relative = b / t.Mean
	case b > 0:
		t.Relative = math.Inf(1)
	}
	if t.Relative > maxGrowth {
		t.Grows, t.Why = true, fmt.Sprintf("grows %.1f%% of its mean per hour, bound %.0f%%", 100*t.Relative, 100*maxGrowth)
	}
	return t
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// Verdict is the run's outcome: a trend per series, and whether the custom
// resources converged at the end.
type Verdict struct {
	MaxGrowth float64
	Trends    []Trend
	// Converged: every custom resource was Ready for its latest spec at the
	// end; Problems lists what was not (and anything else that failed).
	Converged bool
	Problems  []string
}

// JudgeAll fits every series of the samples.
func JudgeAll(samples []Sample, maxGrowth float64) []Trend {
	var out []Trend
	for _, s := range Series {
		out = append(out, Judge(s.Name, s.Gated, samples, s.Value, maxGrowth))
	}
	return out
}

// OK reports whether no gated series grew and everything converged.
func (v Verdict) OK() bool {
	if !v.Converged || len(v.Problems) > 0 {
		return false
	}
	for _, t := range v.Trends {
		if t.Gated && t.Grows {
			return false
		}
	}
	return true
}

// Print writes the verdict as a table.
func (v Verdict) Print(w io.Writer) {
	fmt.Fprintf(w, "growth over the second half (least-squares line; bound %.0f%% of the mean per hour for RSS, goroutines, open fds):\n", 100*v.MaxGrowth)
	fmt.Fprintf(w, "  %-20s %6s %8s %12s %14s %9s  %s\n", "series", "points", "from", "mean", "slope/hour", "relative", "verdict")
	for _, t := range v.Trends {
		verdict := "flat"
		switch {
		case t.Points < minPoints:
			verdict = "cannot tell: " + t.Why
		case t.Grows && t.Gated:
			verdict = "GROWS: " + t.Why
		case t.Grows:
			verdict = "grows (not gated): " + t.Why
		case !t.Gated:
			verdict = "flat (not gated)"
		}
		if t.Points < minPoints {
			fmt.Fprintf(w, "  %-20s %6d %8s %12s %14s %9s  %s\n", t.Series, t.Points, "-", "-", "-", "-", verdict)
			continue
		}
		fmt.Fprintf(w, "  %-20s %6d %8s %12.1f %+14.2f %+8.1f%%  %s\n", t.Series, t.Points, t.From.Round(time.Second), t.Mean, t.SlopePerHour, 100*t.Relative, verdict)
	}
	if v.Converged {
		fmt.Fprintln(w, "convergence: every custom resource Ready for its latest spec")
	}
	for _, p := range v.Problems {
		fmt.Fprintln(w, "problem:", p)
	}
	if v.OK() {
		fmt.Fprintln(w, "verdict: PASS")
	} else {
		fmt.Fprintln(w, "verdict: FAIL")
	}
}
