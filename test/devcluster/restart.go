package devcluster

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// Components lists the names of the cluster's processes, in start order.
func Components() []string {
	out := make([]string, len(components))
	for i, c := range components {
		out[i] = c.name
	}
	return out
}

// Crash SIGKILLs one component, as a crash would (nothing is flushed or
// closed on the way out), and waits until it is gone. Its ports and data
// stay; Up starts it again.
func (c *Cluster) Crash(name string) error {
	if !slices.Contains(Components(), name) {
		return fmt.Errorf("devcluster: no component %q (have %v)", name, Components())
	}
	p, ok := c.state.Procs[name]
	if !ok || !p.Alive() {
		return fmt.Errorf("devcluster: %s is not running", name)
	}
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
		return fmt.Errorf("devcluster: killing %s: %w", name, err)
	}
	for range 200 {
		if !p.Alive() {
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return fmt.Errorf("devcluster: %s (pid %d) did not exit after SIGKILL", name, p.PID)
}

// Restart crashes a component, leaves it down for down, and starts it again
// with Up (same ports, same data), returning once the whole cluster is
// healthy again.
func (c *Cluster) Restart(ctx context.Context, name string, down time.Duration) error {
	if err := c.Crash(name); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	up, err := Up(ctx, c.cfg)
	if err != nil {
		return fmt.Errorf("devcluster: restarting %s: %w", name, err)
	}
	c.state = up.state
	return nil
}
