package bench

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/chartkeeper/chartkeeper/test/framework/procfs"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// expand replaces the placeholders of a subject's command.
func expand(words []string, vars map[string]string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		for k, v := range vars {
			w = strings.ReplaceAll(w, "{"+k+"}", v)
		}
		out[i] = w
	}
	return out
}

// usage is what /proc says about the process now.
type usage struct {
	// CPUSeconds is user plus system time so far.
	CPUSeconds float64
	// PeakRSSBytes is the peak resident set size so far (VmHWM).
	PeakRSSBytes int64
}

func procUsage(pid int) (usage, error) {
	var u usage
	cpu, err := readCPU(pid)
	if err != nil {
		return u, err
	}
	u.CPUSeconds = cpu.seconds
	hwm, ok, err := procfs.Status(pid, "VmHWM")
	if err != nil || !ok {
		return u, err
	}
	kb, err := strconv.ParseInt(strings.TrimSuffix(hwm, " kB"), 10, 64)
	if err != nil {
		return u, fmt.Errorf("/proc/%d/status VmHWM: %w", pid, err)
	}
	u.PeakRSSBytes = kb * 1024
	return u, nil
}
