package chaos

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chartkeeper/chartkeeper/test/framework/childproc"
	"github.com/chartkeeper/chartkeeper/test/framework/freeport"
)

// supervisor keeps one operator process running, as a Deployment would:
// when the process exits by itself it is started again. The harness kills
// it on purpose with kill, which holds the restart back for a while.
type supervisor struct {
	args    []string
	env     []string
	logPath string
	log     io.Writer

	mu      sync.Mutex
	proc    *childproc.Process
	probe   string
	metrics string // "" unless the command line has {metrics}
	starts  int
	exits   []string // why the process stopped by itself
	heldTil time.Time
}

func newSupervisor(cfg Config, watchesPath string) *supervisor {
	return &supervisor{
		args:    cfg.Operator,
		env:     []string{"KUBECONFIG=" + cfg.Kubeconfig},
		logPath: filepath.Join(cfg.WorkDir, "operator.log"),
		log:     cfg.Log,
	}
}

// expand fills in the placeholders of the operator's command line.
func (s *supervisor) expand(watches, kubeconfig, probe, metrics string) []string {
	out := make([]string, len(s.args))
	r := strings.NewReplacer("{watches}", watches, "{kubeconfig}", kubeconfig, "{probe}", probe, "{metrics}", metrics)
	for i, a := range s.args {
		out[i] = r.Replace(a)
	}
	return out
}

// start starts the operator (the caller holds mu).
func (s *supervisor) startLocked(watches, kubeconfig string) error {
	probe, err := freeport.Addr()
	if err != nil {
		return err
	}
	metrics := ""
	if slices.ContainsFunc(s.args, func(a string) bool { return strings.Contains(a, "{metrics}") }) {
		if metrics, err = freeport.Addr(); err != nil {
			return err
		}
	}
	p, err := childproc.Start(s.expand(watches, kubeconfig, probe, metrics), s.env, s.logPath)
	if err != nil {
		return err
	}
	s.proc, s.probe, s.metrics = p, probe, metrics
	s.starts++
	return nil
}

// run starts the operator and restarts it whenever it is found stopped and
// not held down, until ctx ends; then it stops it.
func (s *supervisor) run(ctx context.Context, watches, kubeconfig string) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		if s.proc == nil || s.exitedLocked() {
			if time.Now().After(s.heldTil) {
				if err := s.startLocked(watches, kubeconfig); err != nil {
					fmt.Fprintf(s.log, "  operator: cannot start: %v\n", err)
				}
			}
		}
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			s.mu.Lock()
			if s.proc != nil {
				_ = s.proc.Stop(30 * time.Second)
			}
			s.mu.Unlock()
			return
		case <-tick.C:
		}
	}
}

// exitedLocked reports whether the current process has stopped, and
// records why when it stopped by itself.
func (s *supervisor) exitedLocked() bool {
	if s.proc == nil {
		return true
	}
	err, done := s.proc.Exited()
	if !done {
		return false
	}
	// kill forgets the processes it kills: this one stopped by itself.
	s.exits = append(s.exits, err.Error())
	fmt.Fprintf(s.log, "  operator: exited by itself (%v); restarting it\n", err)
	s.proc = nil
	return true
}

// kill SIGKILLs the operator now and keeps it down for down.
func (s *supervisor) kill(down time.Duration) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heldTil = time.Now().Add(down)
	if s.proc == nil {
		return false
	}
	if _, done := s.proc.Exited(); done {
		s.exitedLocked()
		return false
	}
	s.proc.Kill()
	s.proc = nil
	return true
}

// crashLoop is how many exits by itself, while ready waits, make the
// operator broken rather than unlucky.
const crashLoop = 3

// ready waits until a running operator answers /readyz.
func (s *supervisor) ready(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	_, before := s.counts()
	for {
		s.mu.Lock()
		probe, up, exits := s.probe, s.proc != nil, s.exits
		s.mu.Unlock()
		if n := len(exits) - len(before); n >= crashLoop {
			return fmt.Errorf("the operator exited %d times while starting, last: %s (log: %s)", n, exits[len(exits)-1], s.logPath)
		}
		if up && childproc.Probe(ctx, "http://"+probe+"/readyz") == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the operator was not ready within %s (log: %s)", timeout, s.logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (s *supervisor) counts() (starts int, exits []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.starts, append([]string(nil), s.exits...)
}
