package harnesscmd

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/chartkeeper/chartkeeper/test/devcluster"
)

// Main runs a harness command named name: run's context ends on SIGINT or
// SIGTERM (the harness then stops early and still reports), and an error
// is printed as "<name>: <error>" on stderr, the command exiting 1.
func Main(name string, run func(context.Context) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// Cluster brings up a local cluster of the command's own in cfg.Dir, once
// a cluster an interrupted run left there is purged. Call purge when done,
// whatever the outcome: it stops the cluster and deletes cfg.Dir (its
// progress to stderr), printing a failure as "<name>: stopping the
// cluster: <error>".
func Cluster(ctx context.Context, name string, cfg devcluster.Config) (c *devcluster.Cluster, purge func(), err error) {
	_ = devcluster.Purge(cfg.Dir, nil) // a cluster left by an interrupted run
	c, err = devcluster.Up(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return c, func() {
		if err := devcluster.Purge(cfg.Dir, os.Stderr); err != nil {
			fmt.Fprintf(os.Stderr, "%s: stopping the cluster: %v\n", name, err)
		}
	}, nil
}
