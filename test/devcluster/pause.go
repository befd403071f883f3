package devcluster

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"
)

// Pause freezes one component with SIGSTOP for d and resumes it with
// SIGCONT: its sockets stay open and nothing answers, which is how a
// network partition looks from its clients (a paused kube-apiserver: the
// operator's requests hang; a paused etcd: the API server's do). The
// component is resumed whatever happens, ctx ending included (it then
// returns ctx's error after resuming). It returns once the whole cluster
// answers its health checks again.
func (c *Cluster) Pause(ctx context.Context, name string, d time.Duration) (err error) {
	if !slices.Contains(Components(), name) {
		return fmt.Errorf("devcluster: no component %q (have %v)", name, Components())
	}
	p, ok := c.state.Procs[name]
	if !ok || !p.Alive() {
		return fmt.Errorf("devcluster: %s is not running", name)
	}
	if err := syscall.Kill(p.PID, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("devcluster: stopping %s: %w", name, err)
	}
	resumed := false
	resume := func() error {
		if resumed || !p.Alive() {
			return nil
		}
		resumed = true
		if err := syscall.Kill(p.PID, syscall.SIGCONT); err != nil {
			return fmt.Errorf("devcluster: resuming %s: %w", name, err)
		}
		return nil
	}
	defer func() {
		if rerr := resume(); rerr != nil && err == nil {
			err = rerr
		}
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
	}
	if err := resume(); err != nil {
		return err
	}
	return c.healthy(ctx)
}

// healthy waits (bounded by the start timeout) until every component
// answers its health check.
func (c *Cluster) healthy(ctx context.Context) error {
	for _, comp := range components {
		h := comp.health(c)
		if err := poll(ctx, c.cfg.StartTimeout, waitInterval, func(ctx context.Context) error { return c.probe(ctx, h) }); err != nil {
			return fmt.Errorf("devcluster: %s after a pause: %w", comp.name, err)
		}
	}
	return nil
}
