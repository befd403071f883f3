package cli

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// predecessorFlags are the run flags of helm-operator-plugins' and
// operator-sdk's Helm operators that chartkeeper has under another name,
// or not at all: a Deployment moved over with its args keeps starting
// (docs/migrating.md). Each is honoured, or refused with the reason.
type predecessorFlags struct {
	// reconcilePeriod and maxConcurrent are the defaults of watches that
	// set no reconcilePeriod or maxConcurrentReconciles of their own (the
	// predecessors' meaning); unset, chartkeeper's defaults hold.
	reconcilePeriod optionalDuration
	maxConcurrent   optionalInt
	// enableHTTP2: chartkeeper serves metrics over HTTP/1.1 only.
	enableHTTP2 bool
	// configFile: controller-runtime's ComponentConfig, which
	// controller-runtime no longer has.
	configFile string
	// suppressOverrideValues silences operator-sdk's OverrideValuesInUse
	// Events, which chartkeeper does not record: nothing to silence.
	suppressOverrideValues bool
}

func (f *predecessorFlags) bind(fs *flag.FlagSet, r *runFlags) {
	fs.Var(&f.reconcilePeriod, "reconcile-period", "reconcile period of watches without their own reconcilePeriod (helm-operator-plugins' and operator-sdk's flag; default: chartkeeper's, only on change)")
	fs.Var(&f.maxConcurrent, "max-concurrent-reconciles", "parallel reconciles of watches without their own maxConcurrentReconciles (helm-operator-plugins' and operator-sdk's flag)")
	fs.StringVar(&r.metricsAddr, "metrics-addr", "127.0.0.1:8080", "deprecated name of --metrics-bind-address (helm-operator-plugins, operator-sdk)")
	fs.BoolVar(&r.leader.Enabled, "enable-leader-election", false, "deprecated name of --leader-elect (helm-operator-plugins, operator-sdk)")
	fs.BoolVar(&f.enableHTTP2, "enable-http2", false, "accepted as false only: metrics are served over HTTP/1.1 (helm-operator-plugins' flag)")
	fs.StringVar(&f.configFile, "config", "", "refused: controller-runtime's ComponentConfig file (operator-sdk's deprecated flag); use flags")
	fs.BoolVar(&f.suppressOverrideValues, "suppress-override-values", false, "accepted: chartkeeper records no OverrideValuesInUse Events (operator-sdk's flag)")
}

// apply refuses what chartkeeper cannot honour and gives the watches
// without their own settings the flags' defaults.
func (f *predecessorFlags) apply(ws []watches.Watch) error {
	if f.enableHTTP2 {
		return errors.New("--enable-http2: chartkeeper serves metrics over HTTP/1.1 only (HTTP/2 is off by default in helm-operator-plugins too); drop the flag")
	}
	if f.configFile != "" {
		return fmt.Errorf("--config %s: controller-runtime's ComponentConfig file is not read; give its settings as flags (chartkeeper run -h)", f.configFile)
	}
	if f.maxConcurrent.set && f.maxConcurrent.v < 1 {
		return fmt.Errorf("--max-concurrent-reconciles must be at least 1, got %d", f.maxConcurrent.v)
	}
	if f.reconcilePeriod.set && f.reconcilePeriod.v < 0 {
		return fmt.Errorf("--reconcile-period must not be negative, got %s", f.reconcilePeriod.v)
	}
	for i := range ws {
		if f.reconcilePeriod.set && ws[i].ReconcilePeriod == nil {
			ws[i].ReconcilePeriod = &metav1.Duration{Duration: f.reconcilePeriod.v}
		}
		if f.maxConcurrent.set && ws[i].MaxConcurrentReconciles == nil {
			n := f.maxConcurrent.v
			ws[i].MaxConcurrentReconciles = &n
		}
	}
	return nil
}

// optionalDuration is a duration flag that knows whether it was given.
type optionalDuration struct {
	v   time.Duration
	set bool
}

func (d *optionalDuration) String() string {
	if !d.set {
		return ""
	}
	return d.v.String()
}

func (d *optionalDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.v, d.set = v, true
	return nil
}

// optionalInt is an integer flag that knows whether it was given.
type optionalInt struct {
	v   int
	set bool
}

func (n *optionalInt) String() string {
	if !n.set {
		return ""
	}
	return fmt.Sprint(n.v)
}

func (n *optionalInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("not an integer: %q", s)
	}
	n.v, n.set = v, true
	return nil
}
