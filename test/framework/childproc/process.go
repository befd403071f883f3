package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a started child process.
type Process struct {
	cmd  *exec.Cmd
	done chan error
	log  *os.File
}

// Start starts args[0] with args[1:] in a process group of its own, with
// env added to this process's environment and its output appended to
// logPath. The child is SIGKILLed if this process dies.
func Start(args []string, env []string, logPath string) (*Process, error) {
	if len(args) == 0 {
		return nil, errors.New("childproc: no command")
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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
	p := &Process{cmd: cmd, done: make(chan error, 1), log: f}
	go func() { p.done <- cmd.Wait() }()
	return p, nil
}

// PID is the process's id (and its group's).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Name is the program that was started.
func (p *Process) Name() string { return p.cmd.Args[0] }

// Exited returns the exit error if the process has stopped (an exit with
// status 0 reads as an error "exited" too: a supervised process is not
// meant to stop by itself).
func (p *Process) Exited() (error, bool) {
	select {
	case err := <-p.done:
		p.done <- err
		if err == nil {
			err = errors.New("exited")
		}
		return err, true
	default:
		return nil, false
	}
}

// wait blocks until the process stops and returns its exit error; the value
// is put back, so every later caller sees it too.
func (p *Process) wait() error {
	err := <-p.done
	p.done <- err
	return err
}

// Stop sends SIGTERM to the process group and SIGKILL after grace. It
// returns nil when the process stopped on SIGTERM (or had exited cleanly).
func (p *Process) Stop(grace time.Duration) error {
	defer p.log.Close()
	pgid := -p.cmd.Process.Pid
	_ = syscall.Kill(pgid, syscall.SIGTERM)
	select {
	case <-p.signalled():
		return exitOK(p.wait())
	case <-time.After(grace):
		_ = syscall.Kill(pgid, syscall.SIGKILL)
		p.wait()
		return fmt.Errorf("%s did not stop within %s of SIGTERM; killed", p.Name(), grace)
	}
}

// Kill SIGKILLs the process group (a crash: nothing runs on the way out)
// and waits until the process is gone.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	p.wait()
	p.log.Close()
}

// signalled returns a channel closed once the process has stopped.
func (p *Process) signalled() <-chan struct{} {
	ch := make(chan struct{})
	go func() { p.wait(); close(ch) }()
	return ch
}

// exitOK accepts an exit caused by SIGTERM.
func exitOK(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	return err
}
