package operator

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsTLS is the certificate of the secure metrics endpoint: tls.crt
// and tls.key (or CertName and KeyName) in CertDir, reloaded when they
// change. An empty CertDir serves a self-signed certificate made at start.
type MetricsTLS struct {
	CertDir, CertName, KeyName string
}

// WithSecureMetrics serves the metrics endpoint over HTTPS, and only to
// clients whose bearer token the API server authenticates (TokenReview)
// and authorizes to get the non-resource URL /metrics
// (SubjectAccessReview): kubebuilder's --metrics-secure. Default: plain
// HTTP, for loopback.
func WithSecureMetrics(t MetricsTLS) Option {
	return func(o *options) { o.metricsTLS = &t }
}

// metricsServer is controller-runtime's metrics server configuration.
func (o options) metricsServer() metricsserver.Options {
	m := metricsserver.Options{BindAddress: o.metricsAddr}
	if o.metricsTLS == nil {
		return m
	}
	m.SecureServing = true
	m.FilterProvider = filters.WithAuthenticationAndAuthorization
	m.CertDir, m.CertName, m.KeyName = o.metricsTLS.CertDir, o.metricsTLS.CertName, o.metricsTLS.KeyName
	// HTTP/2 off, as kubebuilder scaffolds it: HTTP/2 Stream Cancellation
	// and Rapid Reset (CVE-2023-44487, CVE-2023-39325).
	m.TLSOpts = []func(*tls.Config){func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }}
	return m
}
