package soak

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/bench"
	"github.com/chartkeeper/chartkeeper/test/framework/procfs"
)

// The operator's metrics a sample reads (besides bench.RequestsMetric).
const (
	goroutinesMetric = "go_goroutines"
	openFDsMetric    = "process_open_fds"
	heapMetric       = "go_memstats_heap_inuse_bytes"
	reconcileMetric  = "controller_runtime_reconcile_total"
)

// sampler reads the operator: /proc for its memory and CPU, its metrics
// endpoint for the rest, and the custom resources for readiness.
type sampler struct {
	pid        int
	metricsURL string
	w          *workload
	prev       reading
}

// reading holds the counters a sample turns into rates.
type reading struct {
	at                            time.Time
	requests, reconciles, cpuSecs float64
	changes                       int
}

func (sm *sampler) read(ctx context.Context) (reading, map[string]float64, error) {
	m, err := bench.ScrapeMetrics(ctx, sm.metricsURL)
	if err != nil {
		return reading{}, nil, err
	}
	cpu, err := bench.CPUSeconds(sm.pid)
	if err != nil {
		return reading{}, nil, err
	}
	return reading{at: time.Now(), requests: m[bench.RequestsMetric], reconciles: m[reconcileMetric], cpuSecs: cpu, changes: sm.w.total()}, m, nil
}

// start takes the reading the first sample's rates are counted from.
func (sm *sampler) start(ctx context.Context) error {
	r, _, err := sm.read(ctx)
	sm.prev = r
	return err
}

// take samples the operator now.
func (sm *sampler) take(ctx context.Context, elapsed time.Duration) (Sample, error) {
	r, m, err := sm.read(ctx)
	if err != nil {
		return Sample{}, err
	}
	rss, err := rssMiB(sm.pid)
	if err != nil {
		return Sample{}, err
	}
	live, ready, _, err := readiness(ctx, sm.w)
	if err != nil {
		return Sample{}, err
	}
	dt := r.at.Sub(sm.prev.at).Seconds()
	s := Sample{
		Elapsed: elapsed, RSSMiB: rss, HeapMiB: m[heapMetric] / (1 << 20),
		Goroutines: m[goroutinesMetric], OpenFDs: m[openFDsMetric],
		APIRate:    (r.requests - sm.prev.requests) / dt,
		Reconciles: r.reconciles - sm.prev.reconciles,
		CPUPercent: 100 * (r.cpuSecs - sm.prev.cpuSecs) / dt,
		Live:       live, Ready: ready, Changes: r.changes - sm.prev.changes,
	}
	sm.prev = r
	return s, nil
}

// rssMiB is the process's resident set size now (VmRSS).
func rssMiB(pid int) (float64, error) {
	v, ok, err := procfs.Status(pid, "VmRSS")
	if err != nil || !ok {
		return 0, fmt.Errorf("/proc/%d/status: no VmRSS (%v)", pid, err)
	}
	kb, err := strconv.ParseFloat(strings.TrimSuffix(v, " kB"), 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/status VmRSS %q: %w", pid, v, err)
	}
	return kb / 1024, nil
}

// readiness lists the custom resources: how many exist (not being
// deleted), how many of those are Ready for their generation, and for
// each that is not, why.
func readiness(ctx context.Context, w *workload) (live, ready int, notReady map[string]string, err error) {
	list, err := w.crs.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, nil, err
	}
	notReady = map[string]string{}
	for i := range list.Items {
		u := &list.Items[i]
		if u.GetDeletionTimestamp() != nil {
			continue
		}
		live++
		if why := readyFor(u); why != "" {
			notReady[u.GetNamespace()+"/"+u.GetName()] = why
			continue
		}
		ready++
	}
	return live, ready, notReady, nil
}

// readyFor returns "" when u is Ready for its generation, else why not.
func readyFor(u *unstructured.Unstructured) string {
	st, err := api.StatusOf(u)
	if err != nil {
		return "unreadable status: " + err.Error()
	}
	c := meta.FindStatusCondition(st.Conditions, api.ConditionReady)
	switch {
	case c == nil:
		return "no Ready condition"
	case st.ObservedGeneration != u.GetGeneration():
		return fmt.Sprintf("status for generation %d, resource at %d", st.ObservedGeneration, u.GetGeneration())
	case c.Status != metav1.ConditionTrue:
		return fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
	}
	return ""
}

// converged checks every slot: its custom resource exists, is Ready for
// its generation, and its released ConfigMap holds the message of its
// spec. It returns what is wrong, nil when nothing.
func converged(ctx context.Context, w *workload, cs kubernetes.Interface, selector string) ([]string, error) {
	list, err := w.crs.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	cms, err := cs.CoreV1().ConfigMaps(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	held := map[string]string{}
	for _, cm := range cms.Items {
		held[cm.Namespace+"/"+cm.Name] = cm.Data["message"]
	}
	crs := map[string]*unstructured.Unstructured{}
	for i := range list.Items {
		u := &list.Items[i]
		crs[u.GetNamespace()+"/"+u.GetName()] = u
	}
	var out []string
	for _, s := range w.snapshot() {
		k := s.key.String()
		u := crs[k]
		if u == nil || u.GetDeletionTimestamp() != nil {
			out = append(out, k+": no custom resource")
			continue
		}
		if why := readyFor(u); why != "" {
			out = append(out, k+": "+why)
			continue
		}
		if m, _, _ := unstructured.NestedString(u.Object, "spec", "message"); held[k] != m {
			out = append(out, fmt.Sprintf("%s: ConfigMap holds %q, spec asks %q", k, held[k], m))
		}
	}
	sort.Strings(out)
	return out, nil
}

// csvHeader names soak.csv's columns.
var csvHeader = []string{"elapsed_s", "rss_mib", "heap_mib", "goroutines", "open_fds", "api_requests_per_s",
	"reconciles", "cpu_percent", "live_crs", "ready_crs", "changes"}

// WriteCSV writes the samples to path.
func WriteCSV(path string, samples []Sample) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	_ = w.Write(csvHeader)
	g := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	for _, s := range samples {
		_ = w.Write([]string{g(s.Elapsed.Seconds(), 0), g(s.RSSMiB, 2), g(s.HeapMiB, 2), g(s.Goroutines, 0), g(s.OpenFDs, 0),
			g(s.APIRate, 2), g(s.Reconciles, 0), g(s.CPUPercent, 1), strconv.Itoa(s.Live), strconv.Itoa(s.Ready), strconv.Itoa(s.Changes)})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadCSV reads samples WriteCSV wrote (to plot or judge them again).
func ReadCSV(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 || strings.Join(rows[0], ",") != strings.Join(csvHeader, ",") {
		return nil, fmt.Errorf("%s: not a soak.csv (header %v)", path, rows[:min(1, len(rows))])
	}
	var out []Sample
	for i, r := range rows[1:] {
		v := make([]float64, len(r))
		for j, x := range r {
			if v[j], err = strconv.ParseFloat(x, 64); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, i+2, err)
			}
		}
		out = append(out, Sample{Elapsed: time.Duration(v[0]) * time.Second, RSSMiB: v[1], HeapMiB: v[2], Goroutines: v[3], OpenFDs: v[4],
			APIRate: v[5], Reconciles: v[6], CPUPercent: v[7], Live: int(v[8]), Ready: int(v[9]), Changes: int(v[10])})
	}
	return out, nil
}
