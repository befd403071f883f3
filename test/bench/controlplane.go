package bench

import (
	"fmt"
	"strconv"

	"github.com/chartkeeper/chartkeeper/test/framework/procfs"
)

// controlPlane is the processes of the cluster's control plane, by
// component name (Config.ControlPlane): their CPU time is what serving a
// subject costs the cluster.
type controlPlane map[string]int

// cpuSample is one reading of a process's CPU time. start (field 22 of
// /proc/<pid>/stat) tells the process apart from a later one given the
// same PID.
type cpuSample struct {
	seconds float64
	start   uint64
}

// sample reads the CPU time of every process that can be read; a process
// that is gone is left out.
func (cp controlPlane) sample() map[string]cpuSample {
	if len(cp) == 0 {
		return nil
	}
	out := make(map[string]cpuSample, len(cp))
	for name, pid := range cp {
		if s, err := readCPU(pid); err == nil {
			out[name] = s
		}
	}
	return out
}

func readCPU(pid int) (cpuSample, error) {
	f, err := procfs.Stat(pid)
	if err != nil {
		return cpuSample{}, err
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseUint(f[12], 10, 64) // field 15
	start, err3 := strconv.ParseUint(f[19], 10, 64) // field 22
	if err1 != nil || err2 != nil || err3 != nil {
		return cpuSample{}, fmt.Errorf("/proc/%d/stat: unexpected times", pid)
	}
	return cpuSample{seconds: float64(utime+stime) / clockTicks, start: start}, nil
}

// controlPlaneCPU is what the processes read both before and after a
// phase used during it: their sum and each one's share. A process read
// only once (it exited, or started, during the phase) or replaced by
// another with its PID is left out. ok is false when no process was read
// twice: the figure is then absent, not zero.
func controlPlaneCPU(before, after map[string]cpuSample) (sum float64, byComponent map[string]float64, ok bool) {
	for name, b := range before {
		a, found := after[name]
		if !found || a.start != b.start || a.seconds < b.seconds {
			continue
		}
		if byComponent == nil {
			byComponent = map[string]float64{}
		}
		byComponent[name] = a.seconds - b.seconds
		sum += a.seconds - b.seconds
	}
	return sum, byComponent, byComponent != nil
}
