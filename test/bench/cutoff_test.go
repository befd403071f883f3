package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestMeasureCountsTheWatchesCutOff: a phase records how many watches the
// API server closed as unresponsive while it ran, of every resource,
// absent metric (none cut off yet) counting as none.
func TestMeasureCountsTheWatchesCutOff(t *testing.T) {
	for _, c := range []struct {
		name          string
		before, after string // the lines of apiserver_terminated_watchers_total
		want          float64
	}{
		{"none yet, none during", "", "", 0},
		{"none yet, then kwok's Pod watch, again and again", "", `{group="",resource="pods"} 49`, 49},
		{"some before, more during, of two resources", `{group="",resource="pods"} 2`,
			`{group="",resource="pods"} 51` + "\n" + cutOffMetric + `{group="bench.chartkeeper.dev",resource="benches"} 1`, 50},
		{"some before, none during", `{group="",resource="pods"} 7`, `{group="",resource="pods"} 7`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := metricsServer(t, "bench-floor", func(reading int) string {
				lines := []string{c.before, c.after}[min(reading, 2)-1]
				if lines == "" {
					return ""
				}
				return fmt.Sprintf("# TYPE %s counter\n%s%s\n", cutOffMetric, cutOffMetric, lines)
			})
			p := phaseRun{name: PhaseUpgrade, timeout: 10 * time.Second, log: &strings.Builder{}, label: "floor",
				act: func(context.Context) error { return nil }}
			ph, err := measure(context.Background(), p, nil, nil, requestCounter{cs: cs, flowSchema: "bench-floor"}, "")
			if err != nil {
				t.Fatal(err)
			}
			if ph.WatchesCutOff != c.want || ph.APIRequests != 1 {
				t.Errorf("watches cut off %v, requests %v; want %v, 1", ph.WatchesCutOff, ph.APIRequests, c.want)
			}
		})
	}
}

// TestTableShowsWatchesCutOffWithoutRatio: the count of watches cut off is
// shown for each subject, and no ratio is taken of it.
func TestTableShowsWatchesCutOffWithoutRatio(t *testing.T) {
	res := &Result{N: 2, Namespaces: 1, Concurrency: 2}
	for _, s := range []struct {
		name string
		cut  [3]float64
	}{{SubjectChartkeeper, [3]float64{0, 0, 0}}, {SubjectFloor, [3]float64{0, 49, 2}}} {
		sr := SubjectResult{Name: s.name}
		for i, name := range workPhases {
			sr.Phases = append(sr.Phases, Phase{Name: name, Seconds: 10, Complete: true, APIRequests: 4, WatchesCutOff: s.cut[i]})
		}
		res.Subjects = append(res.Subjects, sr)
	}
	var line string
	for _, l := range strings.Split(res.Table(), "\n") {
		if strings.HasPrefix(l, "watches the API server cut off") {
			line = l
		}
	}
	fields := strings.Fields(strings.TrimPrefix(line, "watches the API server cut off (install+upgrade+delete)"))
	if len(fields) != 3 || fields[0] != "0.0" || fields[1] != "51.0" || fields[2] != "-" {
		t.Errorf("row %q: want chartkeeper 0, floor 51, no ratio\n%s", line, res.Table())
	}
}
