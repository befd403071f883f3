package bench

import (
	"regexp"
	"strings"
	"testing"
)

// sizedResult is one run of chartkeeper and the floor at one size.
func sizedResult(scenario string, n int, ready, rssMiB float64) *Result {
	f := func(v float64) *float64 { return &v }
	rss := int64(rssMiB * (1 << 20))
	install := func(v float64) []Phase {
		return []Phase{{Name: PhaseInstall, Seconds: v, Complete: true, APIRequests: 10 * float64(n),
			Milestones: []Milestone{{Name: MilestoneReady, Reached: n, Seconds: f(v)}}}}
	}
	return &Result{Scenario: scenario, N: n, Concurrency: 10, Repeat: 1, Machine: "AMD EPYC, 2 CPUs, 24 GiB", Subjects: []SubjectResult{
		{Name: SubjectChartkeeper, Run: 1, Command: []string{"ck"}, PeakRSSBytes: &rss, Phases: install(ready)},
		{Name: SubjectFloor, Run: 1, Phases: install(ready / 2)},
	}}
}

func TestSizesTablePrintsPublishedFiguresApart(t *testing.T) {
	table := SizesTable([]*Result{sizedResult("podinfo", 100, 12.5, 90), sizedResult("podinfo", 1000, 120, 200)})
	lines := strings.Split(table, "\n")
	unwrapped := strings.Join(strings.Fields(table), " ")
	find := func(prefix string) int {
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), prefix) {
				return i
			}
		}
		t.Errorf("no line starts with %q:\n%s", prefix, table)
		return -1
	}
	// One line per size and subject, then the published figures of that
	// size; sizes in increasing order, published ones we did not run too.
	order := []int{
		find("100  chartkeeper"),
		find("100  floor"),
		find("100  Flux helm-controller, published [2]"),
		find("500  Flux helm-controller, published [2]"),
		find("1000  chartkeeper"),
		find("1000  floor"),
		find("1000  Flux helm-controller v2.9, published [1]"),
		find("1000  Flux helm-controller, published [2]"),
	}
	for i := 1; i < len(order); i++ {
		if order[i] <= order[i-1] {
			t.Errorf("lines out of order (%v):\n%s", order, table)
			break
		}
	}
	for _, c := range []struct {
		line int
		want []string
	}{
		{order[0], []string{"12.5", "90.0"}}, // install Ready, peak RSS
		{order[2], []string{"~28.0"}},
		{order[3], []string{"~165.0"}},
		{order[6], []string{"279.0", "361.0"}}, // 4 min 39 s
		{order[7], []string{"~480.0", "400.0"}},
	} {
		if c.line < 0 {
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(lines[c.line], w) {
				t.Errorf("line %q lacks %q", lines[c.line], w)
			}
		}
	}
	for _, want := range []string{
		"Sizes 100, 1000: scenario podinfo, concurrency 10",
		"not measured here: they ran on other machines (a 16-core runner; kind on a 16-core GitHub runner, helm-controller limited to 2 CPU / 1 GiB); ours ran on this machine (AMD EPYC, 2 CPUs, 24 GiB)",
		"No ratio is taken against them",
		"[1] Flux helm-controller v2.9, concurrency 10, on a 16-core runner: 1,000 HelmReleases of the podinfo chart installed in 4 min 39 s at 361 MiB peak",
		"Source: GitHub issue 18",
		"[2] Flux helm-controller, concurrency 10, on kind on a 16-core GitHub runner, helm-controller limited to 2 CPU / 1 GiB: 100 releases ~28 s; 500 ~2 min 45 s; 1,000 ~8 min at 400 MiB peak",
		"Source: github.com/fluxcd/flux-benchmark",
	} {
		// The notes are wrapped: compare with the lines joined.
		if !strings.Contains(unwrapped, want) {
			t.Errorf("summary lacks %q:\n%s", want, table)
		}
	}
	if regexp.MustCompile(`[0-9]x\b`).MatchString(table) {
		t.Errorf("a ratio against published figures:\n%s", table)
	}
	// Published figures sit in the published lines only.
	if strings.Contains(lines[order[0]], "published") || strings.Contains(lines[order[4]], "361") {
		t.Errorf("our lines carry published figures:\n%s", table)
	}
}

func TestSizesTableWithoutPublishedFigures(t *testing.T) {
	if got := SizesTable([]*Result{sizedResult(ScenarioDefault, 100, 10, 90)}); got != "" {
		t.Errorf("one size of the default scenario: the output stays as it was, got a summary:\n%s", got)
	}
	if got := SizesTable(nil); got != "" {
		t.Errorf("no results: %q", got)
	}
	two := SizesTable([]*Result{sizedResult(ScenarioDefault, 100, 10, 90), sizedResult(ScenarioDefault, 500, 50, 150)})
	for _, want := range []string{"Sizes 100, 500: scenario default", "   100  chartkeeper", "   500  floor", "Measured on this machine (AMD EPYC, 2 CPUs, 24 GiB)."} {
		if !strings.Contains(two, want) {
			t.Errorf("summary lacks %q:\n%s", want, two)
		}
	}
	if strings.Contains(two, "published") {
		t.Errorf("published figures for a scenario nobody published:\n%s", two)
	}
	// A single podinfo size still shows what Flux published.
	if one := SizesTable([]*Result{sizedResult("podinfo", 1000, 100, 200)}); !strings.Contains(one, "published [1]") {
		t.Errorf("one podinfo size:\n%s", one)
	}
}
