package soak

import (
	"math"
	"strings"
	"testing"
	"time"
)

// series builds samples every minute for minutes, value f(hours).
func series(minutes int, f func(h float64) float64) []Sample {
	var out []Sample
	for i := 1; i <= minutes; i++ {
		e := time.Duration(i) * time.Minute
		out = append(out, Sample{Elapsed: e, RSSMiB: f(e.Hours())})
	}
	return out
}

func rss(s Sample) float64 { return s.RSSMiB }

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []Sample
		grows   bool
		// relative growth per hour expected (when not NaN), within 0.005
		relative float64
	}{
		{"flat", series(60, func(float64) float64 { return 200 }), false, 0},
		{"10% per hour: under the bound", series(60, func(h float64) float64 { return 200 * (1 + 0.1*h) }), false, math.NaN()},
		{"30% of the start per hour: over the bound", series(60, func(h float64) float64 { return 200 + 60*h }), true, math.NaN()},
		{"warm-up in the first half, flat after", series(60, func(h float64) float64 { return 100 + 100*math.Min(h, 0.4)/0.4 }), false, 0},
		{"flat in the first half, growing in the second", series(60, func(h float64) float64 { return 200 + 200*math.Max(0, h-0.5) }), true, math.NaN()},
		{"shrinking", series(60, func(h float64) float64 { return 300 - 100*h }), false, math.NaN()},
		{"sawtooth (GC cycles) around a flat mean", series(60, func(h float64) float64 {
			return 200 + 20*math.Mod(h*60, 5) // 0..80 MiB over and over every 5 min
		}), false, math.NaN()},
		{"one fd more every 10 minutes over 20", series(60, func(h float64) float64 { return 20 + math.Floor(h*6) }), true, math.NaN()},
		{"too few samples", series(3, func(float64) float64 { return 200 }), true, math.NaN()},
		{"zero and flat", series(60, func(float64) float64 { return 0 }), false, 0},
		{"from zero, growing", series(60, func(h float64) float64 { return math.Max(0, h-0.5) }), true, math.NaN()},
		{"no samples", nil, true, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := Judge("RSS (MiB)", true, tc.samples, rss, 0.20)
			if tr.Grows != tc.grows {
				t.Errorf("grows %v, want %v (relative %.3f, slope %.2f/h, mean %.1f, %d points: %s)", tr.Grows, tc.grows, tr.Relative, tr.SlopePerHour, tr.Mean, tr.Points, tr.Why)
			}
			if !math.IsNaN(tc.relative) && math.Abs(tr.Relative-tc.relative) > 0.005 {
				t.Errorf("relative %.4f, want %.4f", tr.Relative, tc.relative)
			}
		})
	}
}

func TestJudgeSlopeAndSecondHalf(t *testing.T) {
	// 200 MiB + 40 MiB/h: over 30..60 min the mean is 230, 40/230 = 17.4%.
	tr := Judge("RSS (MiB)", true, series(60, func(h float64) float64 { return 200 + 40*h }), rss, 0.20)
	if tr.Points != 31 || tr.From != 30*time.Minute {
		t.Errorf("fitted %d points from %s, want 31 from 30m", tr.Points, tr.From)
	}
	if math.Abs(tr.SlopePerHour-40) > 1e-6 || math.Abs(tr.Mean-230) > 1e-6 || tr.Grows {
		t.Errorf("slope %.3f/h, mean %.3f, grows %v; want 40, 230, false", tr.SlopePerHour, tr.Mean, tr.Grows)
	}
}

func TestVerdictOK(t *testing.T) {
	flat := series(60, func(float64) float64 { return 100 })
	for i := range flat {
		flat[i].Goroutines, flat[i].OpenFDs, flat[i].HeapMiB = 300, 25, 50
		flat[i].APIRate = float64(i) // grows, but is not gated
	}
	v := Verdict{MaxGrowth: 0.2, Trends: JudgeAll(flat, 0.2), Converged: true}
	if !v.OK() {
		t.Fatalf("flat gated series and a growing ungated one: not OK: %+v", v.Trends)
	}
	var b strings.Builder
	v.Print(&b)
	if !strings.Contains(b.String(), "verdict: PASS") || !strings.Contains(b.String(), "grows (not gated)") {
		t.Errorf("printed:\n%s", b.String())
	}
	leak := append([]Sample(nil), flat...)
	for i := range leak {
		leak[i].Goroutines = 300 + 10*float64(i)
	}
	if v := (Verdict{MaxGrowth: 0.2, Trends: JudgeAll(leak, 0.2), Converged: true}); v.OK() {
		t.Error("goroutines growing 600 an hour: OK")
	}
	if v := (Verdict{MaxGrowth: 0.2, Trends: JudgeAll(flat, 0.2)}); v.OK() {
		t.Error("not converged: OK")
	}
	if v := (Verdict{MaxGrowth: 0.2, Trends: JudgeAll(flat, 0.2), Converged: true, Problems: []string{"operator exited"}}); v.OK() {
		t.Error("a problem: OK")
	}
}

func TestCSVRoundTripAndPlot(t *testing.T) {
	samples := series(10, func(h float64) float64 { return 100 + h })
	for i := range samples {
		samples[i].Goroutines, samples[i].OpenFDs, samples[i].APIRate, samples[i].Live, samples[i].Ready, samples[i].Changes = 300, 20, 12.5, 50, 49, 120
	}
	dir := t.TempDir()
	path := dir + "/soak.csv"
	if err := WriteCSV(path, samples); err != nil {
		t.Fatal(err)
	}
	got, err := ReadCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(samples) || got[9].Elapsed != 10*time.Minute || got[9].Ready != 49 || got[9].APIRate != 12.5 || math.Abs(got[9].RSSMiB-samples[9].RSSMiB) > 0.05 {
		t.Errorf("read back %+v, wrote %+v", got[9], samples[9])
	}
	trends := JudgeAll(got, 0.2)
	for _, name := range []string{"soak.svg", "soak.png"} {
		if err := Plot(dir+"/"+name, "test", got, trends); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
