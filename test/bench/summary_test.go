package bench

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestSpreadIsMedianMinMax(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []float64
		want   Figure
	}{
		{"one run", []float64{78}, Figure{Median: 78, Min: 78, Max: 78, Runs: 1}},
		{"odd count, unsorted", []float64{80.2, 75.1, 78}, Figure{Median: 78, Min: 75.1, Max: 80.2, Runs: 3}},
		{"even count: mean of the middle two", []float64{4, 1, 3, 2}, Figure{Median: 2.5, Min: 1, Max: 4, Runs: 4}},
		{"two runs", []float64{10, 12}, Figure{Median: 11, Min: 10, Max: 12, Runs: 2}},
		{"ties", []float64{5, 5, 9, 5, 1}, Figure{Median: 5, Min: 1, Max: 9, Runs: 5}},
		{"zeros", []float64{0, 0, 0}, Figure{Runs: 3}},
	} {
		values := append([]float64(nil), c.values...)
		if got := spread(c.values); got != c.want {
			t.Errorf("%s: spread(%v) = %+v, want %+v", c.name, c.values, got, c.want)
		}
		for i := range values {
			if values[i] != c.values[i] {
				t.Errorf("%s: spread reordered its input: %v", c.name, c.values)
			}
		}
	}
	if median(nil) != 0 {
		t.Error("median of nothing is not 0")
	}
}

func TestFigureText(t *testing.T) {
	for _, c := range []struct {
		name   string
		f      *Figure
		repeat int
		want   string
	}{
		{"absent", nil, 3, "-"},
		{"one run, as before repeats existed", &Figure{Median: 78, Min: 78, Max: 78, Runs: 1}, 1, "78.0"},
		{"below one", &Figure{Median: 0.05, Min: 0.05, Max: 0.05, Runs: 1}, 1, "0.05"},
		{"three runs", &Figure{Median: 78, Min: 75.1, Max: 80.2, Runs: 3}, 3, "78.0 (75.1–80.2)"},
		{"small values", &Figure{Median: 0.06, Min: 0.05, Max: 0.07, Runs: 3}, 3, "0.06 (0.05–0.07)"},
		{"a run missing", &Figure{Median: 25, Min: 20, Max: 30, Runs: 2}, 3, "25.0 (20.0–30.0, 2 runs)"},
		{"a single run of three", &Figure{Median: 25, Min: 25, Max: 25, Runs: 1}, 3, "25.0 (25.0–25.0, 1 run)"},
		{"unfinished", &Figure{Median: 30, Min: 28, Max: 31, Runs: 3, Incomplete: true}, 3, ">30.0 (28.0–31.0)"},
	} {
		if got := c.f.text(c.repeat); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// repeatedResult is three runs of chartkeeper and the floor, and a peer
// measured in two of them.
func repeatedResult() *Result {
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	done := func(name string, v float64) Milestone {
		return Milestone{Name: name, Reached: 2, Seconds: f(v), Times: []float64{v / 2, v}}
	}
	res := &Result{N: 2, Namespaces: 1, Concurrency: 2, IdleSeconds: 60, Repeat: 3, Scenario: "podinfo"}
	for run, ck := range []struct {
		ready, floor, rss, gets float64
		upgradeDone             bool
	}{{10, 5, 40, 2, true}, {12, 6, 60, 4, false}, {11, 4, 50, 6, true}} {
		upgrade := Phase{Name: PhaseUpgrade, Seconds: 20, Complete: ck.upgradeDone, Milestones: []Milestone{done(MilestoneReady, 20)}}
		if !ck.upgradeDone {
			upgrade.Seconds = 25 // gave up: a lower bound
			upgrade.Milestones = []Milestone{{Name: MilestoneReady, Reached: 1, Times: []float64{3}}}
		}
		res.Subjects = append(res.Subjects,
			SubjectResult{Name: SubjectChartkeeper, Run: run + 1, Command: []string{"ck"}, PeakRSSBytes: i(int64(ck.rss) << 20), Phases: []Phase{
				{Name: PhaseInstall, Seconds: ck.ready, Complete: true, RequestsByKind: map[string]float64{"get secrets": ck.gets},
					Milestones: []Milestone{done(MilestoneReady, ck.ready)}},
				upgrade,
			}},
			SubjectResult{Name: SubjectFloor, Run: run + 1, Phases: []Phase{
				{Name: PhaseInstall, Seconds: ck.floor, Complete: true, Milestones: []Milestone{done(MilestoneReady, ck.floor)}},
				{Name: PhaseUpgrade, Seconds: 8, Complete: true, Milestones: []Milestone{done(MilestoneReady, 8)}},
			}})
		if run < 2 {
			res.Subjects = append(res.Subjects, SubjectResult{Name: "peer", Run: run + 1, Command: []string{"peer"}, Phases: []Phase{
				{Name: PhaseInstall, Seconds: 30, Complete: true, Milestones: []Milestone{done(MilestoneReady, []float64{30, 20}[run])}},
			}})
		}
	}
	for i, s := range res.Subjects {
		if s.Name == "peer" && s.Run == 2 {
			res.Subjects[i].Error = "exited"
		}
	}
	return res
}

func TestTableOfSeveralRunsShowsMediansAndSpread(t *testing.T) {
	res := repeatedResult()
	table := res.Table()
	lines := map[string]string{}
	for _, l := range strings.Split(table, "\n") {
		if label, _, ok := strings.Cut(l, " ("); ok {
			lines[label] = l
		}
	}
	for _, c := range []struct{ line, want string }{
		{"install: all Ready", "11.0 (10.0–12.0)"},         // chartkeeper: median of 10, 12, 11
		{"install: all Ready", "5.0 (4.0–6.0)"},            // the floor
		{"install: all Ready", "25.0 (20.0–30.0, 2 runs)"}, // the peer ran twice
		{"install: all Ready", "2.20x"},                    // 11 / 5: medians, not means
		{"install: all Ready", "2.27x"},                    // 25 / 11
		{"upgrade: all Ready", ">20.0 (20.0–25.0)"},        // one run did not finish
		{"peak RSS", "50.0 (40.0–60.0)"},
	} {
		if !strings.Contains(lines[c.line], c.want) {
			t.Errorf("%s lacks %q:\n%s", c.line, c.want, table)
		}
	}
	if strings.Contains(lines["upgrade: all Ready"], "x") {
		t.Errorf("a ratio was taken from an unfinished run: %q", lines["upgrade: all Ready"])
	}
	for _, want := range []string{
		"N=2 custom resources in 1 namespaces, concurrency 2, scenario podinfo, median of 3 runs (min–max)",
		"peer (run 2): exited",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	// Each column is as wide as its widest cell: every line of the table
	// (the header and each row) has the same width.
	body := strings.Split(strings.SplitN(table, "\n\n", 3)[1], "\n")
	for _, l := range body {
		if len([]rune(l)) != len([]rune(body[0])) {
			t.Errorf("columns do not line up:\n%s", strings.Join(body, "\n"))
			break
		}
	}

	// The breakdown is the median of the runs: 2, 4 and 6 requests for 2 CRs.
	if b := res.Breakdown(); !strings.Contains(b, "median of 3 runs") || !strings.Contains(b, "get secrets                                       2.00") {
		t.Errorf("breakdown:\n%s", b)
	}

	// result.json keeps the summary next to every run.
	sum := res.summarize()
	ready := rowByID(sum, rowInstallReady)
	if f := ready.figure(SubjectChartkeeper); f == nil || *f != (Figure{Subject: SubjectChartkeeper, Median: 11, Min: 10, Max: 12, Runs: 3}) {
		t.Errorf("summary of install Ready: %+v", ready)
	}
	if err := res.Plot(filepath.Join(t.TempDir(), "c.png")); err != nil {
		t.Fatal(err)
	}
}
