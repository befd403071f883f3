package chaos

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"time"
)

// Restarter crashes and restarts control-plane components
// (devcluster.Cluster implements it).
type Restarter interface {
	// Restart SIGKILLs component, keeps it down for down and starts it again,
	// returning once the cluster is healthy.
	Restart(ctx context.Context, component string, down time.Duration) error
}

// Config says what to run and how hard to shake it. Zero fields take the
// documented defaults.
type Config struct {
	// Kubeconfig is a cluster admin's kubeconfig (required).
	Kubeconfig string
	// Cluster restarts the API server and etcd; nil skips those faults.
	Cluster Restarter
	// Operator is the operator's command line (required). "{watches}",
	// "{kubeconfig}" and "{probe}" (a free loopback address for
	// --health-probe-bind-address) are expanded.
	Operator []string
	// Chart is the chart the chaos kind releases (required). It must render
	// what test/e2e/testdata/charts/app renders from the values replicas,
	// port, data and configMaps: a Deployment and a Service named after the
	// release, a ConfigMap "<release>-config" holding data, and configMaps
	// ConfigMaps "<release>-extra-<i>" holding data too.
	Chart string
	// WorkDir receives watches.yaml and the operator's logs (required).
	WorkDir string
	// CRs is the number of custom resources. Default 24.
	CRs int
	// Namespaces spreads them over this many namespaces. Default 3.
	Namespaces int
	// Duration is how long faults and spec changes go on, at least one
	// round of every fault kind. Default 3m.
	Duration time.Duration
	// FaultEvery is the mean pause between two faults. Default 4s.
	FaultEvery time.Duration
	// ChangeEvery is the mean pause between two spec changes. Default 400ms.
	ChangeEvery time.Duration
	// MaxConfigMaps bounds the extra ConfigMaps of a spec (the larger, the
	// longer an operation stays pending). Default 60.
	MaxConfigMaps int
	// Seed makes the run's choices repeatable. Default: from the clock
	// (printed, so a failing run can be repeated).
	Seed uint64
	// ConvergeTimeout bounds the wait for everything to converge after the
	// faults stop. Default 5m.
	ConvergeTimeout time.Duration
	// Log receives progress lines. Default: discarded.
	Log io.Writer
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Kubeconfig == "" {
		errs = append(errs, errors.New("chaos: Kubeconfig is required"))
	}
	if len(c.Operator) == 0 {
		errs = append(errs, errors.New("chaos: Operator is required"))
	}
	if c.Chart == "" || c.WorkDir == "" {
		errs = append(errs, errors.New("chaos: Chart and WorkDir are required"))
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	defInt(&c.CRs, 24)
	defInt(&c.Namespaces, 3)
	defInt(&c.MaxConfigMaps, 60)
	def(&c.Duration, 3*time.Minute)
	def(&c.FaultEvery, 4*time.Second)
	def(&c.ChangeEvery, 400*time.Millisecond)
	def(&c.ConvergeTimeout, 5*time.Minute)
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.CRs < 1 || c.Namespaces < 1 || c.Namespaces > c.CRs || c.MaxConfigMaps < 1 {
		errs = append(errs, errors.New("chaos: need CRs ≥ Namespaces ≥ 1 and MaxConfigMaps ≥ 1"))
	}
	if c.Duration < 0 || c.FaultEvery <= 0 || c.ChangeEvery <= 0 || c.ConvergeTimeout <= 0 {
		errs = append(errs, errors.New("chaos: durations must be positive"))
	}
	var err error
	if c.Chart != "" {
		if c.Chart, err = filepath.Abs(c.Chart); err != nil {
			errs = append(errs, err)
		}
	}
	if c.WorkDir != "" {
		if c.WorkDir, err = filepath.Abs(c.WorkDir); err != nil {
			errs = append(errs, err)
		}
	}
	return c, errors.Join(errs...)
}

// jitter returns a random duration in [d/2, 3d/2).
func jitter(r *rand.Rand, d time.Duration) time.Duration {
	return d/2 + time.Duration(r.Int64N(int64(d)))
}
