package soak

import (
	"errors"
	"io"
	"path/filepath"
	"time"
)

// Config says what to run. Zero fields take the documented defaults.
type Config struct {
	// Kubeconfig is a cluster admin's kubeconfig (required).
	Kubeconfig string
	// Operator is the operator's command line (required). "{watches}",
	// "{kubeconfig}", "{metrics}" and "{probe}" (free loopback addresses)
	// are expanded.
	Operator []string
	// Chart is the chart every custom resource releases (required): it
	// takes the values replicas and message and releases a ConfigMap named
	// after the release holding message (test/bench/chart).
	Chart string
	// OutDir receives watches.yaml, operator.log, soak.csv, soak.svg and
	// verdict.txt (required).
	OutDir string
	// CRs is the number of custom resources. Default 1000.
	CRs int
	// PerNamespace is how many share a namespace. Default 50.
	PerNamespace int
	// Duration is how long the churn goes on. Default 60m.
	Duration time.Duration
	// Rate is the churn's changes per second (spec changes, deletes and
	// re-creates together). Default 2.
	Rate float64
	// Sample is the time between two samples. Default 1m.
	Sample time.Duration
	// MaxGrowth bounds the fitted growth of RSS, goroutines and open files
	// over the second half, per hour, as a fraction of the series' mean.
	// Default 0.20.
	MaxGrowth float64
	// MaxHistory is the watch's maxHistory. Default 2: a release is at
	// its bound after its first upgrade, which at the default rate nearly
	// every release has had within the first half of the hour, so the
	// stored history (which the operator caches) is flat in the second.
	MaxHistory int
	// SetupTimeout bounds the creation of the custom resources until all
	// are Ready; ConvergeTimeout the wait for all to be Ready after the
	// churn. Default 5m each.
	SetupTimeout, ConvergeTimeout time.Duration
	// Seed makes the churn's choices repeatable. Default: from the clock.
	Seed uint64
	// Log receives progress lines. Default: discarded.
	Log io.Writer
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.Kubeconfig == "" || len(c.Operator) == 0 || c.Chart == "" || c.OutDir == "" {
		errs = append(errs, errors.New("soak: Kubeconfig, Operator, Chart and OutDir are required"))
	}
	defInt := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	defInt(&c.CRs, 1000)
	defInt(&c.PerNamespace, 50)
	defInt(&c.MaxHistory, 2)
	def(&c.Duration, 60*time.Minute)
	def(&c.Sample, time.Minute)
	def(&c.SetupTimeout, 5*time.Minute)
	def(&c.ConvergeTimeout, 5*time.Minute)
	if c.Rate == 0 {
		c.Rate = 2
	}
	if c.MaxGrowth == 0 {
		c.MaxGrowth = 0.20
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.CRs < 1 || c.PerNamespace < 1 || c.MaxHistory < 1 || c.Rate <= 0 || c.MaxGrowth <= 0 {
		errs = append(errs, errors.New("soak: CRs, PerNamespace, MaxHistory, Rate and MaxGrowth must be positive"))
	}
	if c.Duration <= 0 || c.Sample <= 0 || c.Sample > c.Duration || c.SetupTimeout <= 0 || c.ConvergeTimeout <= 0 {
		errs = append(errs, errors.New("soak: durations must be positive, Sample at most Duration"))
	}
	var err error
	for _, p := range []*string{&c.Chart, &c.OutDir} {
		if *p != "" {
			if *p, err = filepath.Abs(*p); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return c, errors.Join(errs...)
}
