package bench

import "time"

// Result is everything one invocation measured at one size; result.json
// holds it.
type Result struct {
	Started  time.Time `json:"started"`
	Machine  string    `json:"machine,omitempty"`
	Scenario string    `json:"scenario,omitempty"`
	N        int       `json:"n"`
	// Namespaces hold the custom resources of each subject.
	Namespaces  int `json:"namespaces"`
	Concurrency int `json:"concurrency"`
	// IdleSeconds is the length of each operator's idle phase.
	IdleSeconds float64 `json:"idleSeconds"`
	// Repeat is how many runs were asked for (Config.Repeat; 0 reads as 1).
	Repeat int `json:"repeat,omitempty"`
	// CPUs is the number of CPUs of the machine (runtime.NumCPU): the
	// table's shares of the cores are of that many.
	CPUs int `json:"cpus,omitempty"`
	// Subjects are every subject's measurements of every run, in the order
	// they were taken: run 1's subjects, then run 2's, and so on.
	Subjects []SubjectResult `json:"subjects"`
	// Summary is the table's figures: for each of its rows, each subject's
	// median over the runs with its spread, and the ratios of the medians.
	// Written with result.json.
	Summary []SummaryRow `json:"summary,omitempty"`
}

// SubjectResult is one subject's measurements in one run.
type SubjectResult struct {
	Name string `json:"name"`
	// Run is the run these measurements belong to, from 1.
	Run     int      `json:"run,omitempty"`
	Command []string `json:"command,omitempty"`
	Phases  []Phase  `json:"phases"`
	// CPUSeconds and PeakRSSBytes are the operator process's totals when
	// it was stopped; absent for the floor, which runs inside the harness.
	CPUSeconds   *float64 `json:"cpuSeconds,omitempty"`
	PeakRSSBytes *int64   `json:"peakRSSBytes,omitempty"`
	// Error says why the subject's run ended early, if it did.
	Error string `json:"error,omitempty"`
}

// Phase is one phase of a subject: install, idle, upgrade or delete.
type Phase struct {
	Name string `json:"name"`
	// Seconds is the phase's wall time: until every milestone was reached
	// by every release, or until the timeout.
	Seconds float64 `json:"seconds"`
	// Complete is false when the phase timed out or the operator died.
	Complete   bool        `json:"complete"`
	Milestones []Milestone `json:"milestones,omitempty"`
	// CPUSeconds is the operator's CPU time during the phase (absent for the floor).
	CPUSeconds *float64 `json:"cpuSeconds,omitempty"`
	// ControlPlaneCPUSeconds is the CPU time the control plane's processes
	// (Config.ControlPlane) used during the phase, whatever the subject;
	// ControlPlaneCPUByComponent is each one's. A process that could not
	// be read both before and after the phase (it exited) is left out;
	// both are absent when none could, or when the run did not start the
	// cluster it measured on.
	ControlPlaneCPUSeconds     *float64           `json:"controlPlaneCPUSeconds,omitempty"`
	ControlPlaneCPUByComponent map[string]float64 `json:"controlPlaneCPUByComponent,omitempty"`
	// APIRequests is how many requests of the subject the API server served
	// during the phase.
	APIRequests float64 `json:"apiRequests"`
	// WatchesCutOff is how many watches, of any client, the API server
	// closed during the phase because their client did not keep up
	// (apiserver_terminated_watchers_total). Each is resumed and replayed:
	// kwok's one watch of every Pod, cut off again and again at N=10,000,
	// made a phase cost more CPU than its rollouts (docs/benchmarks.md).
	// A phase with some did not measure its subject alone.
	WatchesCutOff float64 `json:"watchesCutOff"`
	// RequestsByKind is the operator's own count of the requests it sent
	// during the phase, keyed "verb resource" (chartkeeper's
	// chartkeeper_api_requests_total; absent for other subjects).
	RequestsByKind map[string]float64 `json:"requestsByKind,omitempty"`
}

// Milestone is the time each release reached one state, since the phase began.
type Milestone struct {
	Name    string `json:"name"`
	Reached int    `json:"reached"`
	// Seconds is when the last release reached it; absent if some never did.
	Seconds *float64 `json:"seconds,omitempty"`
	// Times are the releases' times in increasing order: the convergence curve.
	Times []float64 `json:"times"`
}

// phase returns the named phase, or nil.
func (s SubjectResult) phase(name string) *Phase {
	for i := range s.Phases {
		if s.Phases[i].Name == name {
			return &s.Phases[i]
		}
	}
	return nil
}

// milestone returns the named milestone of a phase, or nil.
func (p *Phase) milestone(name string) *Milestone {
	if p == nil {
		return nil
	}
	for i := range p.Milestones {
		if p.Milestones[i].Name == name {
			return &p.Milestones[i]
		}
	}
	return nil
}

// Phase and milestone names.
const (
	PhaseInstall = "install"
	PhaseIdle    = "idle"
	PhaseUpgrade = "upgrade"
	PhaseDelete  = "delete"

	MilestoneDeployed = "deployed"
	MilestoneReady    = "ready"
	MilestoneGone     = "gone"
)
