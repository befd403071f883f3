package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"time"
)

// Restarter crashes and restarts control-plane components
// (devcluster.Cluster implements it).
type Restarter interface {
	// Restart SIGKILLs component, keeps it down for down and starts it again,
	// returning once the cluster is healthy.
	Restart(ctx context.Context, component string, down time.Duration) error
}

// Pauser freezes control-plane components (devcluster.Cluster implements
// it). A Config.Cluster that is also a Pauser gets the pause faults.
type Pauser interface {
	// Pause SIGSTOPs component for d and SIGCONTs it, returning once the
	// cluster is healthy.
	Pause(ctx context.Context, component string, d time.Duration) error
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
	// Kinds spreads them over this many kinds (1 to 3, see kinds.go): Chaos,
	// then ChaosKept (the chart's kept ConfigMap on), then ChaosHooked (the
	// chart's hook on, every action runs it). Default 1.
	Kinds int
	// Faults are the fault kinds injected, each once per round. Default:
	// ClassicFaults (AllFaults adds the pauses and the kills mid-unlock,
	// mid-drift-correction and mid-hook).
	Faults []FaultKind
	// KillWeight: each kill kind comes this many times per round. Default 1.
	KillWeight int
	// MinKills keeps the faults going past Duration until this many
	// operator kills were made, up to MaxDuration. Default 0.
	MinKills int
	// MaxDuration bounds the faults whatever MinKills says. Default
	// 3×Duration; reaching it with fewer than MinKills kills fails the run.
	MaxDuration time.Duration
	// CatchTimeout bounds the wait for a release to reach the state a kill
	// targets. Default 20s.
	CatchTimeout time.Duration
	// PauseFor is the mean time a paused component stays frozen. Default 3s.
	PauseFor time.Duration
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
	defInt(&c.Kinds, 1)
	defInt(&c.KillWeight, 1)
	def(&c.CatchTimeout, catchTimeout)
	def(&c.PauseFor, 3*time.Second)
	if len(c.Faults) == 0 {
		c.Faults = ClassicFaults()
	}
	def(&c.Duration, 3*time.Minute)
	def(&c.MaxDuration, 3*c.Duration)
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
	if c.Kinds < 1 || c.Kinds > len(chaosKinds) || c.Kinds > c.CRs || c.KillWeight < 1 || c.MinKills < 0 {
		errs = append(errs, fmt.Errorf("chaos: need 1 ≤ Kinds ≤ %d (and ≤ CRs), KillWeight ≥ 1, MinKills ≥ 0", len(chaosKinds)))
	}
	for _, k := range c.Faults {
		if !slices.Contains(AllFaults(), k) {
			errs = append(errs, fmt.Errorf("chaos: unknown fault %q", k))
		}
	}
	if c.Duration < 0 || c.MaxDuration < c.Duration || c.FaultEvery <= 0 || c.ChangeEvery <= 0 || c.ConvergeTimeout <= 0 || c.CatchTimeout <= 0 || c.PauseFor <= 0 {
		errs = append(errs, errors.New("chaos: durations must be positive (MaxDuration at least Duration)"))
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
