package bench

import (
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestConfigDefaultsAndValidation(t *testing.T) {
	chart := t.TempDir()
	if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: x\nversion: 1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := Config{Kubeconfig: "k", Chart: chart, OutDir: "o", Subjects: []Subject{{Name: "floor"}}}
	got, err := base.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if got.N != 100 || got.PerNamespace != 20 || got.Concurrency != 10 || got.Idle != time.Minute || got.PhaseTimeout != 5*time.Minute ||
		got.Repeat != 1 || got.Scenario != ScenarioDefault || got.scenario.Kind != "Bench" {
		t.Fatalf("defaults: %+v", got)
	}
	pod := base
	pod.Scenario = "podinfo"
	if got, err := pod.withDefaults(); err != nil || got.scenario.Kind != "Podinfo" {
		t.Fatalf("podinfo: %v, %+v", err, got.scenario)
	}
	big := base
	big.N = 1000
	if got, _ := big.withDefaults(); got.PhaseTimeout != 2000*time.Second {
		t.Fatalf("timeout for 1000: %s", got.PhaseTimeout)
	}
	bad := []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"no kubeconfig", func(c *Config) { c.Kubeconfig = "" }, "must be set"},
		{"no subjects", func(c *Config) { c.Subjects = nil }, "no subjects"},
		{"bad name", func(c *Config) { c.Subjects = []Subject{{Name: "Helm Operator"}} }, "DNS label"},
		{"same name twice", func(c *Config) { c.Subjects = []Subject{{Name: "a"}, {Name: "a"}} }, "two subjects"},
		{"empty command", func(c *Config) { c.Subjects = []Subject{{Name: "a", Command: []string{}}} }, "empty command"},
		{"negative N", func(c *Config) { c.N = -1 }, "at least 1"},
		{"negative repeat", func(c *Config) { c.Repeat = -2 }, "Repeat (-2) must be at least 1"},
		{"unknown scenario", func(c *Config) { c.Scenario = "nginx" }, `no scenario "nginx" (known: default, podinfo)`},
		{"no chart", func(c *Config) { c.Chart = t.TempDir() }, "Chart.yaml"},
		{"bad control-plane PID", func(c *Config) { c.ControlPlane = map[string]int{"etcd": 0} }, `control-plane process "etcd" has PID 0`},
	}
	for _, b := range bad {
		c := base
		b.change(&c)
		if _, err := c.withDefaults(); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: err = %v, want it to say %q", b.name, err, b.want)
		}
	}
}

func TestKeysSpreadOverNamespaces(t *testing.T) {
	c := Config{N: 45, PerNamespace: 20}
	keys := c.crKeys("ck")
	if len(keys) != 45 || len(c.namespaces("ck")) != 3 {
		t.Fatalf("%d keys in %d namespaces", len(keys), len(c.namespaces("ck")))
	}
	if keys[0] != (key{"bench-ck-000", "bench-0000"}) || keys[20].Namespace != "bench-ck-001" || keys[44] != (key{"bench-ck-002", "bench-0044"}) {
		t.Fatalf("keys: %v %v %v", keys[0], keys[20], keys[44])
	}
}

func TestExpandPlaceholders(t *testing.T) {
	got := expand([]string{"op", "--watches={watches}", "--n={concurrency}", "{unknown}"}, map[string]string{"watches": "/w.yaml", "concurrency": "4"})
	want := []string{"op", "--watches=/w.yaml", "--n=4", "{unknown}"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestProcUsageOfThisProcess(t *testing.T) {
	deadline := time.Now().Add(300 * time.Millisecond)
	x := 0
	for time.Now().Before(deadline) {
		x++
	}
	u, err := procUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPUSeconds <= 0 || u.PeakRSSBytes < 1<<20 {
		t.Fatalf("usage after busy work: %+v (%d loops)", u, x)
	}
	if _, err := procUsage(1 << 30); err == nil {
		t.Fatal("usage of a process that does not exist: no error")
	}
}

func TestPhaseTimesEachMilestone(t *testing.T) {
	keys := []key{{"ns", "a"}, {"ns", "b"}}
	var created atomic.Int32
	p := phaseRun{
		name: "install", keys: keys, timeout: 10 * time.Second, log: &strings.Builder{}, label: "t",
		act: func(context.Context) error { created.Store(1); return nil },
		milestones: []milestoneCheck{
			{"deployed", func(key) bool { return created.Load() == 1 }},
			{"ready", func(k key) bool { return created.Load() == 1 && k.Name == "a" }},
		},
	}
	p.timeout = 500 * time.Millisecond
	ph, err := p.run(context.Background())
	if !errors.Is(err, errPhaseTimeout) || ph.Complete {
		t.Fatalf("b never gets ready: err = %v, complete = %v", err, ph.Complete)
	}
	if m := ph.milestone("deployed"); m.Reached != 2 || m.Seconds == nil {
		t.Fatalf("deployed: %+v", m)
	}
	if m := ph.milestone("ready"); m.Reached != 1 || m.Seconds != nil || len(m.Times) != 1 {
		t.Fatalf("ready: %+v", m)
	}

	p.milestones = p.milestones[:1]
	p.timeout = 10 * time.Second
	ph, err = p.run(context.Background())
	if err != nil || !ph.Complete || ph.Seconds > 5 {
		t.Fatalf("complete phase: err = %v, %+v", err, ph)
	}

	p.alive = func() error { return errors.New("operator exited") }
	if _, err := p.run(context.Background()); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("dead operator: err = %v", err)
	}
}

func TestForEachStopsAtTheFirstError(t *testing.T) {
	keys := make([]key, 100)
	for i := range keys {
		keys[i] = key{"ns", string(rune('a' + i%26))}
	}
	var calls atomic.Int32
	// Calls after the failing one wait for the pool's cancellation, so the
	// count does not depend on how the goroutines are scheduled: at most
	// the failing call, one call per worker and the one being fed.
	err := forEach(context.Background(), keys, 4, func(ctx context.Context, _ key) error {
		switch n := calls.Add(1); {
		case n == 3:
			return errors.New("boom")
		case n > 3:
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Second):
			}
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
	if n := calls.Load(); n > 3+4+1 {
		t.Fatalf("%d calls after an error: the pool did not stop", n)
	}
}

func sampleResult() *Result {
	f := func(v float64) *float64 { return &v }
	i := func(v int64) *int64 { return &v }
	ms := func(name string, last float64, complete bool) Milestone {
		m := Milestone{Name: name, Reached: 2, Times: []float64{last / 2, last}}
		if complete {
			m.Seconds = f(last)
		} else {
			m.Reached, m.Times = 1, m.Times[:1]
		}
		return m
	}
	return &Result{N: 2, Namespaces: 1, Concurrency: 2, IdleSeconds: 60, Subjects: []SubjectResult{
		{Name: "chartkeeper", Command: []string{"ck"}, CPUSeconds: f(3), PeakRSSBytes: i(40 << 20), Phases: []Phase{
			{Name: PhaseInstall, Seconds: 10, Complete: true, CPUSeconds: f(1), APIRequests: 20, Milestones: []Milestone{ms("deployed", 9, true), ms("ready", 10, true)}},
			{Name: PhaseIdle, Seconds: 60, Complete: true, CPUSeconds: f(0.01), APIRequests: 0},
			{Name: PhaseUpgrade, Seconds: 12, Complete: true, CPUSeconds: f(1), APIRequests: 30, Milestones: []Milestone{ms("deployed", 11, true), ms("ready", 12, true)}},
			{Name: PhaseDelete, Seconds: 4, Complete: true, CPUSeconds: f(1), APIRequests: 10, Milestones: []Milestone{ms("gone", 4, true)}},
		}},
		{Name: "floor", Phases: []Phase{
			{Name: PhaseInstall, Seconds: 5, Complete: true, APIRequests: 10, Milestones: []Milestone{ms("deployed", 4.5, true), ms("ready", 5, true)}},
		}},
		{Name: "peer", Command: []string{"peer"}, Error: "upgrade after 30s: timed out", Phases: []Phase{
			{Name: PhaseInstall, Seconds: 30, Complete: true, APIRequests: 80, Milestones: []Milestone{ms("deployed", 20, true), ms("ready", 30, true)}},
			{Name: PhaseUpgrade, Seconds: 30, Complete: false, Milestones: []Milestone{ms("deployed", 30, false)}},
		}},
	}}
}

func TestTableComparesWithTheFloorAndThePeer(t *testing.T) {
	table := sampleResult().Table()
	for _, want := range []string{
		"N=2 custom resources in 1 namespaces, concurrency 2",
		"chartkeeper/floor", "peer/chartkeeper",
		"install: all Ready (s)", "10.0", "5.0", "2.00x", "3.00x", // 10/5 and 30/10
		">30.0", // the peer's unfinished upgrade
		"peak RSS (MiB)", "40.0",
		"peer: upgrade after 30s: timed out",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	for _, line := range strings.Split(table, "\n") {
		if strings.HasPrefix(line, "upgrade: all at revision 2") && strings.HasSuffix(strings.TrimSpace(line), "x") && strings.Count(line, "x") > 1 {
			t.Errorf("a ratio was computed from an unfinished phase: %q", line)
		}
	}
}

func TestPlotWritesAPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.png")
	if err := sampleResult().Plot(path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 400 {
		t.Fatalf("image is %v", b)
	}
}

func TestCurveSteps(t *testing.T) {
	xys := curve([]float64{1, 3})
	want := [][2]float64{{0, 0}, {1, 0}, {1, 1}, {3, 1}, {3, 2}}
	if len(xys) != len(want) {
		t.Fatalf("curve: %v", xys)
	}
	for i, w := range want {
		if xys[i].X != w[0] || xys[i].Y != w[1] {
			t.Fatalf("point %d = %v, want %v", i, xys[i], w)
		}
	}
}
