package bench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/procfs"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// operator is a subject's running process.
type operator struct {
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

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

// startOperator starts args in a process group of its own with its output
// in logPath.
func startOperator(args []string, env []string, logPath string) (*operator, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", args[0], err)
	}
	o := &operator{cmd: cmd, done: make(chan error, 1), log: f}
	go func() { o.done <- cmd.Wait() }()
	return o, nil
}

// exited returns the process's exit error if it has stopped.
func (o *operator) exited() (error, bool) {
	select {
	case err := <-o.done:
		o.done <- err
		if err == nil {
			err = errors.New("exited")
		}
		return err, true
	default:
		return nil, false
	}
}

// usage is what /proc says about the process now.
type usage struct {
	// CPUSeconds is user plus system time so far.
	CPUSeconds float64
	// PeakRSSBytes is the peak resident set size so far (VmHWM).
	PeakRSSBytes int64
}

func (o *operator) usage() (usage, error) {
	return procUsage(o.cmd.Process.Pid)
}

func procUsage(pid int) (usage, error) {
	var u usage
	f, err := procfs.Stat(pid)
	if err != nil {
		return u, err
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64) // field 14
	stime, err2 := strconv.ParseUint(f[12], 10, 64) // field 15
	if err := errors.Join(err1, err2); err != nil {
		return u, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	u.CPUSeconds = float64(utime+stime) / clockTicks
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

// stop sends SIGTERM to the process group, and SIGKILL after grace.
func (o *operator) stop(grace time.Duration) error {
	defer o.log.Close()
	pgid := -o.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case err := <-o.done:
		return exitOK(err)
	case <-time.After(grace):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		<-o.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM; killed", o.cmd.Args[0], grace)
	}
}

// exitOK accepts an exit caused by the signal we sent.
func exitOK(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}
