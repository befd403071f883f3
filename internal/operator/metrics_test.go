package operator

import (
	"crypto/tls"
	"testing"
)

// TestMetricsServerOptions: plain HTTP unless secure serving is asked for;
// secure serving authenticates and authorizes every scrape, refuses
// HTTP/2 (as kubebuilder's scaffold does) and reads its certificate from
// the given directory (self-signed when none is given).
func TestMetricsServerOptions(t *testing.T) {
	tests := []struct {
		name                       string
		opts                       []Option
		secure                     bool
		certDir, certName, keyName string
	}{
		{name: "default is plain HTTP on loopback"},
		{name: "secure with a self-signed certificate", opts: []Option{WithSecureMetrics(MetricsTLS{})}, secure: true},
		{name: "secure with a certificate directory",
			opts:   []Option{WithSecureMetrics(MetricsTLS{CertDir: "/certs", CertName: "cert.pem", KeyName: "key.pem"})},
			secure: true, certDir: "/certs", certName: "cert.pem", keyName: "key.pem"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOptions()
			for _, opt := range tc.opts {
				opt(&o)
			}
			m := o.metricsServer()
			if m.BindAddress != o.metricsAddr {
				t.Errorf("BindAddress = %q, want %q", m.BindAddress, o.metricsAddr)
			}
			if m.SecureServing != tc.secure || (m.FilterProvider != nil) != tc.secure {
				t.Fatalf("SecureServing = %v, filter set = %v; want both %v", m.SecureServing, m.FilterProvider != nil, tc.secure)
			}
			if m.CertDir != tc.certDir || m.CertName != tc.certName || m.KeyName != tc.keyName {
				t.Errorf("certificate = %q %q %q, want %q %q %q", m.CertDir, m.CertName, m.KeyName, tc.certDir, tc.certName, tc.keyName)
			}
			if !tc.secure {
				return
			}
			cfg := &tls.Config{NextProtos: []string{"h2", "http/1.1"}}
			for _, f := range m.TLSOpts {
				f(cfg)
			}
			if len(cfg.NextProtos) != 1 || cfg.NextProtos[0] != "http/1.1" {
				t.Errorf("NextProtos = %v, want only http/1.1", cfg.NextProtos)
			}
		})
	}
}
