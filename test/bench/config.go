package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Subject is one thing a run measures.
type Subject struct {
	// Name labels the subject in results; it is also part of its
	// namespaces' names, so it must be a short DNS label.
	Name string
	// Command starts an operator; nil makes the subject the floor. The
	// words may hold placeholders, replaced before start:
	// {kubeconfig} (the subject's ServiceAccount kubeconfig), {watches}
	// (the benchmark's watches.yaml), {concurrency} (Config.Concurrency),
	// {pprof} (a loopback address serving pprof, when Config.ProfileDir is set),
	// {metrics} (a loopback address for the metrics endpoint, read per phase for
	// chartkeeper_api_requests_total).
	// The process also gets KUBECONFIG in its environment.
	Command []string
}

// Floor reports whether the subject is the floor rather than a process.
func (s Subject) Floor() bool { return s.Command == nil }

// Config is one run. New validates it and fills the documented defaults.
type Config struct {
	// Kubeconfig is an admin kubeconfig of the cluster to measure on (required).
	Kubeconfig string
	// Chart is the bench chart's directory (required): the scenario's.
	Chart string
	// Scenario names the workload (scenario.go): the custom resources'
	// kind, specs and the labels of what the chart releases. Default
	// "default", whose chart is test/bench/chart.
	Scenario string
	// Repeat is how many times the whole measurement (every subject, every
	// phase) runs, one run after the other on the same cluster; the table
	// then shows each figure's median and spread. Default 1.
	Repeat int
	// Subjects are measured in this order (required, at least one).
	Subjects []Subject
	// N is the number of custom resources. Default 100.
	N int
	// PerNamespace is how many custom resources share a namespace. Default 20.
	PerNamespace int
	// Concurrency is the operators' maxConcurrentReconciles (written into
	// watches.yaml, and {concurrency}) and the floor's number of writers.
	// Default 10.
	Concurrency int
	// Idle is how long the idle phase watches an operator with nothing to
	// do. Default 60s; negative skips it.
	Idle time.Duration
	// PhaseTimeout bounds each phase. Default max(5m, N x 2s).
	PhaseTimeout time.Duration
	// OutDir receives result.json, table.txt and convergence.png (required).
	OutDir string
	// ProfileDir, when set, receives CPU profiles of operators started with
	// a {pprof} placeholder, one per install, upgrade and delete phase.
	ProfileDir string
	// ProfileSeconds is the length of each CPU profile. Default 30.
	ProfileSeconds int
	// Log receives progress lines. Default os.Stderr.
	Log io.Writer
	// Machine describes where the run happens, for the record.
	Machine string
	// ControlPlane holds the PIDs of the cluster's control-plane processes
	// by component name (etcd, kube-apiserver, kube-controller-manager,
	// kube-scheduler, kwok), when they run on this machine: the CPU time
	// they use during each phase is recorded with the phase. Nil when the
	// cluster is not the harness's own: there is then no such figure.
	ControlPlane map[string]int

	// scenario is the one Scenario names (set by withDefaults).
	scenario Scenario
}

// Names of the built-in subjects.
const (
	SubjectChartkeeper = "chartkeeper"
	SubjectFloor       = "floor"
)

func (c Config) withDefaults() (Config, error) {
	if c.Kubeconfig == "" || c.Chart == "" || c.OutDir == "" {
		return c, errors.New("bench: Kubeconfig, Chart and OutDir must be set")
	}
	if len(c.Subjects) == 0 {
		return c, errors.New("bench: no subjects")
	}
	seen := map[string]bool{}
	for _, s := range c.Subjects {
		if !isLabel(s.Name) || len(s.Name) > 20 {
			return c, fmt.Errorf("bench: subject name %q must be a DNS label of at most 20 characters", s.Name)
		}
		if seen[s.Name] {
			return c, fmt.Errorf("bench: two subjects named %q", s.Name)
		}
		seen[s.Name] = true
		if s.Command != nil && len(s.Command) == 0 {
			return c, fmt.Errorf("bench: subject %q has an empty command", s.Name)
		}
	}
	for name, pid := range c.ControlPlane {
		if pid <= 0 {
			return c, fmt.Errorf("bench: control-plane process %q has PID %d", name, pid)
		}
	}
	var err error
	if c.scenario, err = LookupScenario(c.Scenario); err != nil {
		return c, err
	}
	c.Scenario = c.scenario.Name
	if c.N == 0 {
		c.N = 100
	}
	if c.Repeat == 0 {
		c.Repeat = 1
	}
	if c.PerNamespace == 0 {
		c.PerNamespace = 20
	}
	if c.Concurrency == 0 {
		c.Concurrency = 10
	}
	if c.Idle == 0 {
		c.Idle = time.Minute
	}
	if c.PhaseTimeout == 0 {
		c.PhaseTimeout = max(5*time.Minute, time.Duration(c.N)*2*time.Second)
	}
	if c.ProfileSeconds == 0 {
		c.ProfileSeconds = 30
	}
	if c.Log == nil {
		c.Log = os.Stderr
	}
	if c.N < 1 || c.PerNamespace < 1 || c.Concurrency < 1 || c.Repeat < 1 || c.PhaseTimeout < 0 {
		return c, fmt.Errorf("bench: N (%d), PerNamespace (%d), Concurrency (%d), Repeat (%d) must be at least 1 and PhaseTimeout (%s) positive",
			c.N, c.PerNamespace, c.Concurrency, c.Repeat, c.PhaseTimeout)
	}
	if c.Chart, err = filepath.Abs(c.Chart); err != nil {
		return c, err
	}
	// Operators are given paths under OutDir; they may run elsewhere.
	if c.OutDir, err = filepath.Abs(c.OutDir); err != nil {
		return c, err
	}
	if _, err := os.Stat(filepath.Join(c.Chart, "Chart.yaml")); err != nil {
		return c, fmt.Errorf("bench: chart: %w", err)
	}
	return c, nil
}

func isLabel(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") || strings.HasSuffix(s, "-") {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// namespaceCount is how many namespaces each subject's custom resources fill.
func (c Config) namespaceCount() int { return (c.N + c.PerNamespace - 1) / c.PerNamespace }

// namespaces returns the namespaces of a subject's custom resources.
func (c Config) namespaces(subject string) []string {
	out := make([]string, c.namespaceCount())
	for i := range out {
		out[i] = fmt.Sprintf("bench-%s-%03d", subject, i)
	}
	return out
}

// crKeys returns namespace/name of every custom resource of a subject, in
// creation order.
func (c Config) crKeys(subject string) []key {
	nss := c.namespaces(subject)
	out := make([]key, c.N)
	for i := range out {
		out[i] = key{Namespace: nss[i/c.PerNamespace], Name: fmt.Sprintf("bench-%04d", i)}
	}
	return out
}

// key names a custom resource, and its release (same name, same namespace).
type key struct{ Namespace, Name string }

func (k key) String() string { return k.Namespace + "/" + k.Name }
