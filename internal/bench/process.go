package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return u, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return u, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return u, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	u.CPUSeconds = float64(utime+stime) / clockTicks
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	defer status.Close()
	sc := bufio.NewScanner(status)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return u, fmt.Errorf("/proc/%d/status VmHWM: %w", pid, err)
			}
			u.PeakRSSBytes = kb * 1024
		}
	}
	return u, sc.Err()
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
