package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestControlPlaneCPUIsWhatEachProcessUsed(t *testing.T) {
	before := map[string]cpuSample{
		"kube-apiserver": {seconds: 10, start: 100},
		"etcd":           {seconds: 4, start: 90},
		"kwok":           {seconds: 1, start: 120},
		"kube-scheduler": {seconds: 2, start: 130},
	}
	after := map[string]cpuSample{
		"kube-apiserver": {seconds: 16.5, start: 100},
		"etcd":           {seconds: 5, start: 90},
		// kwok exited during the phase: not read after it.
		"kube-scheduler": {seconds: 0.5, start: 999}, // restarted with the same PID
	}
	sum, by, ok := controlPlaneCPU(before, after)
	if !ok || sum != 7.5 {
		t.Fatalf("sum = %v, ok = %v, want 7.5 (6.5 + 1)", sum, ok)
	}
	if len(by) != 2 || by["kube-apiserver"] != 6.5 || by["etcd"] != 1 {
		t.Fatalf("by component: %v", by)
	}

	// Nothing read twice (no PIDs, or every process gone): absent, not 0.
	for name, c := range map[string][2]map[string]cpuSample{
		"no control plane": {nil, nil},
		"all gone after":   {before, nil},
		"none before":      {nil, after},
	} {
		if sum, by, ok := controlPlaneCPU(c[0], c[1]); ok || sum != 0 || by != nil {
			t.Errorf("%s: %v, %v, %v", name, sum, by, ok)
		}
	}
}

func TestControlPlaneSampleLeavesOutWhatCannotBeRead(t *testing.T) {
	if controlPlane(nil).sample() != nil {
		t.Fatal("a sample without a control plane")
	}
	cp := controlPlane{"self": os.Getpid(), "gone": 1 << 30}
	s := cp.sample()
	if _, ok := s["gone"]; ok || len(s) != 1 {
		t.Fatalf("sample: %+v", s)
	}
	if s["self"].seconds <= 0 || s["self"].start == 0 {
		t.Fatalf("this process: %+v", s["self"])
	}
}

// metricsServer serves an API server's /metrics with a FlowSchema's count
// of requests, one more at each reading, and then what extra gives for
// that reading (1, 2, ...; nil: nothing).
func metricsServer(t *testing.T, flowSchema string, extra func(reading int) string) kubernetes.Interface {
	t.Helper()
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		n++
		fmt.Fprintf(w, "# TYPE %s counter\n%s{flow_schema=%q,priority_level=\"x\"} %d\n", dispatchedMetric, dispatchedMetric, flowSchema, n)
		if extra != nil {
			fmt.Fprint(w, extra(n))
		}
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestMeasureAddsTheControlPlaneCPUOfWhatDidNotVanish(t *testing.T) {
	counter := requestCounter{cs: metricsServer(t, "bench-floor", nil), flowSchema: "bench-floor"}
	// A process of the control plane that exits during the phase.
	short := exec.Command("sleep", "0.2")
	if err := short.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	cp := controlPlane{"kube-apiserver": os.Getpid(), "kwok": short.Process.Pid, "etcd": 1 << 30}
	p := phaseRun{name: PhaseInstall, timeout: 10 * time.Second, log: &strings.Builder{}, label: "floor",
		act: func(context.Context) error {
			_ = short.Wait() // gone, and reaped
			x := 0           // busy, as a control plane serving the phase
			for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); {
				x++
			}
			return sleep(context.Background(), time.Duration(x%2)) // uses x
		}}
	ph, err := measure(context.Background(), p, nil, cp, counter, "")
	if err != nil {
		t.Fatal(err)
	}
	if !ph.Complete || ph.APIRequests != 1 || ph.CPUSeconds != nil {
		t.Fatalf("phase: %+v", ph)
	}
	if ph.ControlPlaneCPUSeconds == nil || *ph.ControlPlaneCPUSeconds <= 0 {
		t.Fatalf("control plane CPU: %v", ph.ControlPlaneCPUSeconds)
	}
	if _, ok := ph.ControlPlaneCPUByComponent["kube-apiserver"]; !ok || len(ph.ControlPlaneCPUByComponent) != 1 {
		t.Fatalf("by component: %v", ph.ControlPlaneCPUByComponent)
	}

	// A cluster the harness did not start: no figure at all.
	ph, err = measure(context.Background(), p, nil, nil, counter, "")
	if err != nil || ph.ControlPlaneCPUSeconds != nil || ph.ControlPlaneCPUByComponent != nil {
		t.Fatalf("without a control plane: %v, %+v", err, ph)
	}
}

// controlPlaneResult is a run on 2 CPUs: chartkeeper and the floor with
// the control plane's CPU, and a peer measured without it.
func controlPlaneResult() *Result {
	f := func(v float64) *float64 { return &v }
	phases := func(walls, cpu, cp [3]float64, complete bool) []Phase {
		var out []Phase
		for i, name := range workPhases {
			p := Phase{Name: name, Seconds: walls[i], Complete: complete || i == 0}
			if cpu[i] >= 0 {
				p.CPUSeconds = f(cpu[i])
			}
			if cp[i] >= 0 {
				p.ControlPlaneCPUSeconds = f(cp[i])
			}
			out = append(out, p)
		}
		return out
	}
	none := [3]float64{-1, -1, -1}
	return &Result{N: 2, Namespaces: 1, Concurrency: 2, CPUs: 2, Subjects: []SubjectResult{
		// 50 s of wall time, 100 core-seconds: 18 and 61 of them used.
		{Name: SubjectChartkeeper, Command: []string{"ck"}, Phases: phases([3]float64{20, 20, 10}, [3]float64{8, 7, 3}, [3]float64{30, 21, 10}, true)},
		// 25 s, 50 core-seconds: the control plane used 22.5.
		{Name: SubjectFloor, Phases: phases([3]float64{10, 10, 5}, none, [3]float64{10, 10, 2.5}, true)},
		// 40 s, 80 core-seconds, 12 used; its upgrade did not finish.
		{Name: "peer", Command: []string{"peer"}, Phases: phases([3]float64{20, 15, 5}, [3]float64{6, 4, 2}, none, false)},
	}}
}

// tableLine returns the table's line starting with label.
func tableLine(table, label string) string {
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, label+" ") {
			return l
		}
	}
	return ""
}

func TestTableShowsTheControlPlaneCPUAndTheSharesOfTheCores(t *testing.T) {
	res := controlPlaneResult()
	table := res.Table()
	t.Logf("\n%s", table)
	cpuLine := tableLine(table, "CPU seconds (install+upgrade+delete)")
	cpLine := tableLine(table, "control plane CPU seconds (install+upgrade+delete)")
	shareLine := tableLine(table, "share of the 2 cores used, operator / control plane (%)")
	if cpuLine == "" || cpLine == "" || shareLine == "" || !strings.Contains(table, cpuLine+"\n"+cpLine+"\n"+shareLine+"\n") {
		t.Fatalf("the new lines are not right after the CPU seconds:\n%s", table)
	}
	for _, c := range []struct{ line, want string }{
		{cpLine, "61.0"},
		{cpLine, "22.5"},
		{cpLine, "2.71x"}, // 61 / 22.5
		{shareLine, "18 / 61"},
		{shareLine, "- / 45"},    // the floor has no process of its own
		{shareLine, ">15 / -"},   // the peer: 12 / 80, no control-plane figure, unfinished
		{shareLine, "- / 1.36x"}, // chartkeeper/floor: 61 / 45
	} {
		if !strings.Contains(c.line, c.want) {
			t.Errorf("%q lacks %q", c.line, c.want)
		}
	}
	// The peer has no control-plane figure: "-" there, and no ratio of it.
	if f := strings.Fields(strings.TrimPrefix(cpLine, "control plane CPU seconds (install+upgrade+delete)")); len(f) != 5 || f[2] != "-" || f[4] != "-" {
		t.Errorf("control plane line: %q", f)
	}
	// The peer is unfinished: no ratio against chartkeeper.
	if !strings.HasSuffix(shareLine, " -") {
		t.Errorf("a ratio of an unfinished run: %q", shareLine)
	}
	body := strings.Split(strings.SplitN(table, "\n\n", 3)[1], "\n")
	for _, l := range body {
		if len([]rune(l)) != len([]rune(body[0])) {
			t.Errorf("columns do not line up:\n%s", strings.Join(body, "\n"))
			break
		}
	}

	// result.json keeps the two shares apart.
	sum := res.summarize()
	if f := rowByID(sum, rowCPUShare).figure(SubjectChartkeeper); f == nil || f.Median != 18 {
		t.Errorf("operator share: %+v", f)
	}
	if f := rowByID(sum, rowControlShare).figure(SubjectFloor); f == nil || f.Median != 45 {
		t.Errorf("control plane share of the floor: %+v", f)
	}
	if r := rowByID(sum, rowControlShare); r.Label != "share of the 2 cores used, control plane (%)" {
		t.Errorf("label: %q", r.Label)
	}
	if f := rowByID(sum, rowControlPlaneCPU).figure(SubjectChartkeeper); f == nil || f.Median != 61 {
		t.Errorf("control plane CPU: %+v", f)
	}
}

func TestTableWithoutControlPlaneFigures(t *testing.T) {
	// A cluster given by BENCH_KUBECONFIG: nothing of the control plane.
	res := controlPlaneResult()
	res.Subjects = res.Subjects[:2]
	for i := range res.Subjects {
		for j := range res.Subjects[i].Phases {
			res.Subjects[i].Phases[j].ControlPlaneCPUSeconds = nil
		}
	}
	table := res.Table()
	cpLine := tableLine(table, "control plane CPU seconds (install+upgrade+delete)")
	if f := strings.Fields(strings.TrimPrefix(cpLine, "control plane CPU seconds (install+upgrade+delete)")); len(f) != 3 || f[0] != "-" || f[1] != "-" || f[2] != "-" {
		t.Errorf("control plane line: %q", cpLine)
	}
	shareLine := tableLine(table, "share of the 2 cores used, operator / control plane (%)")
	if f := strings.Fields(strings.TrimPrefix(shareLine, "share of the 2 cores used, operator / control plane (%)")); strings.Join(f, " ") != "18 / - - -" {
		t.Errorf("share line: %q", shareLine)
	}
}

func TestTableSharesOverSeveralRunsAndOneCore(t *testing.T) {
	res := controlPlaneResult()
	res.Subjects = res.Subjects[:1]
	second := controlPlaneResult().Subjects[0]
	second.Run = 2
	for i := range second.Phases {
		*second.Phases[i].CPUSeconds *= 2
	}
	res.Subjects = append(res.Subjects, second)
	res.Repeat = 2
	table := res.Table()
	// 18 and 36 (median 27) of the operator, 61 from both runs.
	if l := tableLine(table, "share of the 2 cores used, operator / control plane (%)"); !strings.Contains(l, "27 (18–36) / 61 (61–61)") {
		t.Errorf("share line: %q\n%s", l, table)
	}
	res.CPUs = 1
	if l := tableLine(res.Table(), "share of the core used, operator / control plane (%)"); l == "" {
		t.Errorf("no share line on one core:\n%s", res.Table())
	}
}
