package cli

import (
	"errors"
	"flag"

	"github.com/chartkeeper/chartkeeper/internal/operator"
)

// metricsFlags are kubebuilder's secure metrics flags of "chartkeeper run".
type metricsFlags struct {
	secure bool
	tls    operator.MetricsTLS
}

func (f *metricsFlags) bind(fs *flag.FlagSet) {
	fs.BoolVar(&f.secure, "metrics-secure", false, "serve metrics over HTTPS to clients the API server authenticates and authorizes to get /metrics (default: plain HTTP, for loopback)")
	fs.StringVar(&f.tls.CertDir, "metrics-cert-path", "", "directory holding the metrics server's certificate, reloaded when it changes (default: a self-signed certificate)")
	fs.StringVar(&f.tls.CertName, "metrics-cert-name", "tls.crt", "file name of the metrics server's certificate in --metrics-cert-path")
	fs.StringVar(&f.tls.KeyName, "metrics-cert-key", "tls.key", "file name of the metrics server's key in --metrics-cert-path")
}

// options are the operator's options for the flags: none for plain HTTP.
func (f *metricsFlags) options() ([]operator.Option, error) {
	if !f.secure {
		if f.tls.CertDir != "" {
			return nil, errors.New("--metrics-cert-path needs --metrics-secure")
		}
		return nil, nil
	}
	return []operator.Option{operator.WithSecureMetrics(f.tls)}, nil
}
