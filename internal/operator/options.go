package operator

import (
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"net"
	"time"

	"github.com/go-logr/logr"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// Option configures New.
type Option func(*options)

type options struct {
	metricsAddr string
	metricsTLS  *MetricsTLS
	probeAddr   string
	pprofAddr   string
	leader      LeaderElection
	namespaces  []string
	logger      logr.Logger
	hooks       *hooks.Registry
	// signingKey: the Secret of the release signing key (zero: none).
	signingKey types.NamespacedName
}

func defaultOptions() options {
	return options{
		metricsAddr: "127.0.0.1:8080",
		probeAddr:   "127.0.0.1:8081",
		leader:      LeaderElection{ID: DefaultLeaderElectionID, Timing: DefaultLeaseTiming},
		logger:      logr.Discard(),
	}
}

// WithMetricsAddress sets the metrics endpoint's listen address. Default
// "127.0.0.1:8080"; "0" disables the endpoint.
func WithMetricsAddress(addr string) Option { return func(o *options) { o.metricsAddr = addr } }

// WithProbeAddress sets the /healthz and /readyz listen address. Default
// "127.0.0.1:8081"; "0" disables the endpoint.
func WithProbeAddress(addr string) Option { return func(o *options) { o.probeAddr = addr } }

// WithPprofAddress serves net/http/pprof's profiles (/debug/pprof/) on
// addr, for profiling under load. Default "" (off); keep it on loopback.
func WithPprofAddress(addr string) Option { return func(o *options) { o.pprofAddr = addr } }

// WithLeaderElection turns leader election on with a Lease named id in
// namespace ns ("" = the namespace the operator runs in). Default off;
// id defaults to DefaultLeaderElectionID.
func WithLeaderElection(on bool, id, ns string) Option {
	return func(o *options) {
		o.leader.Enabled = on
		if id != "" {
			o.leader.ID = id
		}
		o.leader.Namespace = ns
	}
}

// DefaultLeaderElectionID names the leader election Lease by default.
const DefaultLeaderElectionID = "chartkeeper-leader.chartkeeper.dev"

// LeaderElection is how replicas choose the one that reconciles
// (controller-runtime's leader election over a Lease).
type LeaderElection struct {
	// Enabled turns leader election on (default off).
	Enabled bool
	// ID names the Lease (default DefaultLeaderElectionID).
	ID string
	// Namespace holds the Lease ("": the namespace the operator runs in).
	Namespace string
	// Timing is the lease timing (default DefaultLeaseTiming).
	Timing LeaseTiming
}

// LeaseTiming is leader election's timing (client-go's leaderelection).
type LeaseTiming struct {
	// LeaseDuration: how long a standby waits, after the leader stopped
	// renewing, before it takes over. A killed leader is replaced within
	// about LeaseDuration + RetryPeriod; a stopped one releases at once.
	LeaseDuration time.Duration
	// RenewDeadline: how long the leader keeps trying to renew before it
	// gives up leading (and the process exits).
	RenewDeadline time.Duration
	// RetryPeriod: how often leader and standbys try.
	RetryPeriod time.Duration
}

// DefaultLeaseTiming is controller-runtime's (and kube-controller-manager's) default.
var DefaultLeaseTiming = LeaseTiming{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

// WithLeaseTiming sets leader election's timing. Default DefaultLeaseTiming;
// New checks LeaseDuration > RenewDeadline > RetryPeriod > 0.
func WithLeaseTiming(t LeaseTiming) Option { return func(o *options) { o.leader.Timing = t } }

// WithNamespaces confines the operator to these namespaces. Default: all.
func WithNamespaces(ns ...string) Option { return func(o *options) { o.namespaces = ns } }

// WithHooks sets the Go hooks of each kind. Default: none.
func WithHooks(r *hooks.Registry) Option { return func(o *options) { o.hooks = r } }

// WithLogger sets the logger. Default: discard.
func WithLogger(l logr.Logger) Option { return func(o *options) { o.logger = l } }

func (o options) validate() error {
	var errs []error
	for _, a := range []struct{ name, addr string }{{"metrics address", o.metricsAddr}, {"probe address", o.probeAddr}, {"pprof address", o.pprofAddr}} {
		if a.addr == "0" || a.addr == "" && a.name == "pprof address" {
			continue
		}
		if _, _, err := net.SplitHostPort(a.addr); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %v", a.name, a.addr, err))
		}
	}
	if o.leader.Enabled && o.leader.ID == "" {
		errs = append(errs, errors.New("leader election needs an ID"))
	}
	if l := o.leader.Timing; !(l.LeaseDuration > l.RenewDeadline && l.RenewDeadline > l.RetryPeriod && l.RetryPeriod > 0) {
		errs = append(errs, fmt.Errorf("leader election needs lease duration > renew deadline > retry period > 0, got %s, %s, %s", l.LeaseDuration, l.RenewDeadline, l.RetryPeriod))
	}
	return errors.Join(errs...)
}
