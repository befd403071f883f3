package devcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// healthCheck is an HTTP GET that must answer 200 (and contain want, if set).
type healthCheck struct {
	url   string
	want  string
	admin bool // present the admin client certificate and verify the cluster CA
}

func (c *Cluster) httpClient(admin bool) (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if admin {
		caPEM, err := c.pki.readFile("ca.crt")
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(caPEM)
		cert, err := tls.LoadX509KeyPair(c.pki.path("admin.crt"), c.pki.path("admin.key"))
		if err != nil {
			return nil, err
		}
		tlsCfg.RootCAs, tlsCfg.Certificates = pool, []tls.Certificate{cert}
	} else {
		// Controller-manager and scheduler serve with self-signed
		// certificates they make themselves; this is a loopback liveness probe.
		tlsCfg.InsecureSkipVerify = true //nolint:gosec
	}
	return &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}, nil
}

// probe runs the check once.
func (c *Cluster) probe(ctx context.Context, h healthCheck) error {
	hc, err := c.httpClient(h.admin)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d: %s", h.url, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	if h.want != "" && !strings.Contains(string(body), h.want) {
		return fmt.Errorf("%s answered %q", h.url, strings.TrimSpace(string(body)))
	}
	return nil
}

// poll calls fn every interval until it succeeds, ctx ends or timeout passes,
// returning the last error in that case.
func poll(ctx context.Context, timeout, interval time.Duration, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if last = fn(ctx); last == nil {
			return nil
		}
		var stop backoffStop
		if errors.As(last, &stop) {
			return stop.error
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready after %s: %w", timeout, last)
		case <-time.After(interval):
		}
	}
}
