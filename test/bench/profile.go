package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
)

// profile starts taking a CPU profile of the process serving pprof at
// addr; the returned func waits for it and saves it.
func (r *runner) profile(ctx context.Context, addr, name string) func() error {
	return r.startProfile(ctx, http.DefaultClient, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, r.cfg.ProfileSeconds), name)
}

// heapAt starts waiting ProfileSeconds, then saves the heap of the process
// serving pprof at addr as name.pprof: what it holds in the middle of a
// phase, at the end of the CPU profile's window, with actions in flight.
// The returned func waits for it.
func (r *runner) heapAt(ctx context.Context, addr, name string) func() error {
	done := make(chan error, 1)
	go func() {
		t := time.NewTimer(time.Duration(r.cfg.ProfileSeconds) * time.Second)
		defer t.Stop()
		select {
		case <-ctx.Done():
			done <- ctx.Err()
		case <-t.C:
			done <- r.savePprof(ctx, "http://"+addr+"/debug/pprof/heap", name)
		}
	}()
	return func() error { return <-done }
}

// profileAPIServer starts taking a CPU profile of the API server (served
// to the admin when the cluster runs with profiling, as the harness's own
// local cluster does under BENCH_PPROF); the returned func waits for it and
// saves it as apiserver-<name>.pprof. Nil when no profiles are wanted.
func (r *runner) profileAPIServer(ctx context.Context, name string) func() error {
	if r.cfg.ProfileDir == "" || r.admin == nil {
		return nil
	}
	cfg := rest.CopyConfig(r.admin)
	cfg.Timeout = 0
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return func() error { return err }
	}
	return r.startProfile(ctx, hc, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", cfg.Host, r.cfg.ProfileSeconds), "apiserver-"+name)
}

// startProfile fetches url with hc in the background; the returned func
// waits for it and saves it as ProfileDir/name.pprof.
func (r *runner) startProfile(ctx context.Context, hc *http.Client, url, name string) func() error {
	done := make(chan error, 1)
	go func() { done <- r.save(ctx, hc, url, name+".pprof") }()
	return func() error { return <-done }
}

// savePprof saves the profile served at url as ProfileDir/name.pprof.
func (r *runner) savePprof(ctx context.Context, url, name string) error {
	return r.save(ctx, http.DefaultClient, url, name+".pprof")
}

// saveMetrics keeps the operator's metrics as they are at the end of a
// phase, beside its profiles: its reconcile, work queue and client
// latency histograms say where a release's time went when the CPU
// profile shows the operator idle.
func (r *runner) saveMetrics(ctx context.Context, url, name string) error {
	return r.save(ctx, http.DefaultClient, url, name+"-metrics.txt")
}

// save writes what url answers to file in the profile directory.
func (r *runner) save(ctx context.Context, hc *http.Client, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	if err := os.MkdirAll(r.cfg.ProfileDir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(r.cfg.ProfileDir, file))
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// waitProfiles waits for the profiles started for a phase and logs any
// that failed (a profile is evidence, not a result: the phase stands).
func (r *runner) waitProfiles(subject string, profiles ...func() error) {
	for _, p := range profiles {
		if p == nil {
			continue
		}
		if err := p(); err != nil {
			fmt.Fprintf(r.cfg.Log, "  %-12s profile: %v\n", subject, err)
		}
	}
}
