package devcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chartkeeper/chartkeeper/test/framework/procfs"
)

// Proc identifies a process we started: its PID and its start time in clock
// ticks since boot (field 22 of /proc/PID/stat). Together they survive PID
// reuse: a PID whose start time differs is somebody else's process.
type Proc struct {
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"`
}

// procStat returns the state letter and start time of pid from /proc.
func procStat(pid int) (state byte, start uint64, err error) {
	fields, err := procfs.Stat(pid)
	if err != nil {
		return 0, 0, err
	}
	start, err = strconv.ParseUint(fields[19], 10, 64) // field 22
	return fields[0][0], start, err
}

// identify records the identity of a process just started.
func identify(pid int) (Proc, error) {
	_, start, err := procStat(pid)
	if err != nil {
		return Proc{}, err
	}
	return Proc{PID: pid, StartTime: start}, nil
}

// Alive reports whether the recorded process still runs (zombies count as gone).
func (p Proc) Alive() bool {
	if p.PID <= 0 {
		return false
	}
	state, start, err := procStat(p.PID)
	return err == nil && start == p.StartTime && state != 'Z' && state != 'X'
}

// Stop sends SIGTERM, waits up to grace for the process to go, then SIGKILLs
// it. It never signals a process that is not the recorded one.
func (p Proc) Stop(grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !p.Alive() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !p.Alive() {
		return nil
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	for range 100 {
		if !p.Alive() {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("process %d did not exit after SIGKILL", p.PID)
}

// startProcess starts bin with args, its output appended to logPath. An
// attached process is killed when the starting process dies (tests); a
// detached one gets its own session and outlives the command that started it.
func startProcess(bin string, args []string, logPath string, attached bool) (Proc, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return Proc{}, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "\n=== %s %s\n", time.Now().Format(time.RFC3339), strings.Join(append([]string{bin}, args...), " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "KUBECONFIG=") // components get their kubeconfig by flag only
	if attached {
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	if err := cmd.Start(); err != nil {
		return Proc{}, err
	}
	// Reap the child if it exits while we still run, so it is never a zombie.
	go func() { _ = cmd.Wait() }()
	return identify(cmd.Process.Pid)
}
