package chaos

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
)

// Report is what a chaos run did and found.
type Report struct {
	Seed       uint64 `json:"seed"`
	CRs        int    `json:"crs"`
	Namespaces int    `json:"namespaces"`
	Kinds      int    `json:"kinds"`
	// KindNames are the kinds' names.
	KindNames []string `json:"kindNames,omitempty"`
	// MinKills is the number of operator kills the run had to make.
	MinKills int `json:"minKills,omitempty"`
	// Faults lists every fault injected, in order.
	Faults       []Fault `json:"faults"`
	FaultSeconds float64 `json:"faultSeconds"`
	// SpecChanges counts the spec writes that succeeded, by kind (update,
	// failing update, create, delete, final update).
	SpecChanges map[string]int `json:"specChanges"`
	// WriteErrors counts spec writes the API server failed.
	WriteErrors int `json:"writeErrors"`
	// OperatorStarts counts operator processes started; OperatorExits lists
	// why the operator stopped when nobody killed it (restarted each time).
	OperatorStarts int      `json:"operatorStarts"`
	OperatorExits  []string `json:"operatorExits,omitempty"`
	// ReleasesChecked counts custom resources checked at the end: live ones
	// for convergence, deleted ones for leftovers.
	ReleasesChecked int     `json:"releasesChecked"`
	LiveChecked     int     `json:"liveChecked"`
	DeletedChecked  int     `json:"deletedChecked"`
	ConvergeSeconds float64 `json:"convergeSeconds"`
	// SettleSeconds is the time from the end of the last fault until every
	// release had settled (no spec changed meanwhile): converged to its
	// spec, or failed with a condition saying why when its spec cannot be
	// released; deleted ones gone. Unsettled: it never did within the
	// timeout (the problems say what was left).
	SettleSeconds float64 `json:"settleSeconds"`
	Unsettled     bool    `json:"unsettled,omitempty"`
	// UnsettledSubjects counts the subjects that never settled, and
	// SettledOthersSeconds is when all the others had (the time from the
	// last fault until the set of subjects with a problem last changed).
	UnsettledSubjects    int     `json:"unsettledSubjects,omitempty"`
	SettledOthersSeconds float64 `json:"settledOthersSeconds,omitempty"`
	// KeptObjects counts the kept objects (helm.sh/resource-policy: keep)
	// seen during the run; each must still be there, under its first UID.
	KeptObjects int `json:"keptObjects"`
	// Failed counts custom resources given a spec that cannot be released
	// after the faults: each must settle, not Ready, with a condition
	// saying why (or it is a problem), before its final spec heals it.
	Failed    int `json:"failed"`
	Explained int `json:"explained"`
	// Problems is what was still wrong when the convergence wait ended.
	Problems []Problem `json:"problems,omitempty"`
	// Lost counts custom resources or objects with a problem: must be 0.
	Lost int `json:"lost"`
}

func (rep *Report) fill(w *workload, op *supervisor) {
	w.mu.Lock()
	rep.SpecChanges = map[string]int{}
	for k, v := range w.changes {
		rep.SpecChanges[k] = v
	}
	rep.WriteErrors = w.errors
	w.mu.Unlock()
	rep.OperatorStarts, rep.OperatorExits = op.counts()
	for _, s := range w.snapshot() {
		rep.ReleasesChecked++
		if s.live {
			rep.LiveChecked++
		} else {
			rep.DeletedChecked++
		}
	}
	rep.Lost = subjects(rep.Problems)
}

// subjects counts the distinct subjects of problems.
func subjects(ps []Problem) int {
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Subject] = true
	}
	return len(seen)
}

// FaultCounts tallies the faults by kind: tried, injected, and of those how
// many hit their target state (Caught).
func (rep *Report) FaultCounts() (kinds []FaultKind, tried, injected, caught map[FaultKind]int) {
	tried, injected, caught = map[FaultKind]int{}, map[FaultKind]int{}, map[FaultKind]int{}
	for _, f := range rep.Faults {
		if _, ok := tried[f.Kind]; !ok {
			kinds = append(kinds, f.Kind)
		}
		tried[f.Kind]++
		if f.Injected {
			injected[f.Kind]++
		}
		if f.Caught {
			caught[f.Kind]++
		}
	}
	slices.Sort(kinds)
	return kinds, tried, injected, caught
}

// Kills counts operator kills (each one survived if Lost is 0).
func (rep *Report) Kills() int {
	return rep.count(func(f Fault) bool { return f.Injected && isKill(f.Kind) })
}

// CaughtKills counts operator kills that hit their target state.
func (rep *Report) CaughtKills() int {
	return rep.count(func(f Fault) bool { return f.Injected && f.Caught && isKill(f.Kind) })
}

// Pauses counts control-plane components frozen and resumed.
func (rep *Report) Pauses() int {
	return rep.count(func(f Fault) bool { return f.Injected && (f.Kind == PauseAPIServer || f.Kind == PauseEtcd) })
}

// PendingKills counts operator kills that left their release's latest
// revision pending (read right after the kill): kills that caught an
// operation half-done, which the next operator must unlock or finish.
func (rep *Report) PendingKills() int {
	return rep.count(func(f Fault) bool { return f.Injected && pending(f.AfterKill) })
}

// Restarts counts control-plane components crashed and restarted.
func (rep *Report) Restarts() int {
	return rep.count(func(f Fault) bool { return f.Injected && (f.Kind == RestartAPIServer || f.Kind == RestartEtcd) })
}

func (rep *Report) count(pred func(Fault) bool) (n int) {
	for _, f := range rep.Faults {
		if pred(f) {
			n++
		}
	}
	return n
}

// Print writes the figures as a table.
func (rep *Report) Print(out io.Writer) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "fault\ttried\tinjected\thit its target state\n")
	kinds, tried, injected, caught := rep.FaultCounts()
	for _, k := range kinds {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\n", k, tried[k], injected[k], caught[k])
	}
	tw.Flush()
	fmt.Fprintf(out, "seed %d; %d custom resources of %d kinds %v in %d namespaces; faults for %.0fs\n", rep.Seed, rep.CRs, rep.Kinds, rep.KindNames, rep.Namespaces, rep.FaultSeconds)
	fmt.Fprintf(out, "operator kills survived: %d (%d hit their target state, %d left a revision pending); control-plane restarts survived: %d; pauses survived: %d; operator starts: %d (%d exits by itself)\n",
		rep.Kills(), rep.CaughtKills(), rep.PendingKills(), rep.Restarts(), rep.Pauses(), rep.OperatorStarts, len(rep.OperatorExits))
	keys := make([]string, 0, len(rep.SpecChanges))
	for k := range rep.SpecChanges {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(out, "spec changes:")
	for _, k := range keys {
		fmt.Fprintf(out, " %s %d;", k, rep.SpecChanges[k])
	}
	fmt.Fprintf(out, " writes failed by the API server: %d\n", rep.WriteErrors)
	fmt.Fprintf(out, "specs that cannot be released: %d, settled with a condition saying why: %d\n", rep.Failed, rep.Explained)
	settled := "settled"
	if rep.Unsettled {
		settled = fmt.Sprintf("NOT settled: %d subjects never did; all the others had %.1fs after the last fault", rep.UnsettledSubjects, rep.SettledOthersSeconds)
	}
	fmt.Fprintf(out, "time to converge after the last fault: %.1fs (%s); kept objects seen: %d\n", rep.SettleSeconds, settled, rep.KeptObjects)
	fmt.Fprintf(out, "releases checked: %d (%d live, converged in %.1fs after their final specs; %d deleted); lost: %d\n",
		rep.ReleasesChecked, rep.LiveChecked, rep.ConvergeSeconds, rep.DeletedChecked, rep.Lost)
	for _, p := range rep.Problems {
		fmt.Fprintf(out, "  PROBLEM %s: %s\n", p.Subject, p.What)
	}
}

// Write saves the report as JSON.
func (rep *Report) Write(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
