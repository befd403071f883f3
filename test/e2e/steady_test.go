package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// scrape sums every sample of each named metric family on a metrics endpoint.
func scrape(t *testing.T, url string, families ...string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, f := range families {
			if strings.HasPrefix(line, f+"{") || strings.HasPrefix(line, f+" ") {
				fields := strings.Fields(line)
				v, _ := strconv.ParseFloat(fields[len(fields)-1], 64)
				out[f] += v
			}
		}
	}
	return out
}

var steadyMetrics = []string{"controller_runtime_reconcile_total", "chartkeeper_helm_actions_total", "rest_client_requests_total", "chartkeeper_releases"}

// In the steady state chartkeeper does nothing: no reconcile, no Helm call,
// no API request. With a reconcilePeriod it reconciles, and still calls
// neither Helm nor the API server (change detection is by digest).
func TestSteadyStateIsQuiet(t *testing.T) {
	// Each case counts the requests of its own operator, confined to its
	// own namespace (appFixture), on its own metrics endpoint: what other
	// tests do in theirs reaches neither its caches nor its count, so the
	// cases run in parallel, with each other and with the other tests.
	// Load only delays the last events of the rollouts: the window starts
	// once they are over (settleSteady).
	parallel(t, 45*time.Second)
	const n = 20
	for _, tc := range []struct {
		name, watches string
		periodic      bool
	}{
		{"event-driven", testWatches(), false},
		{"reconcilePeriod 1s", filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-periodic.yaml"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			metrics := freeAddr(t)
			env, ns, _ := appFixture(t, tc.watches, "--metrics-bind-address", metrics)
			ctx := context.Background()
			for i := range n {
				if err := env.Client.Create(ctx, newApp(ns, fmt.Sprintf("app-%d", i), map[string]any{"replicas": 1})); err != nil {
					t.Fatal(err)
				}
			}
			for i := range n {
				waitReady(t, env, ns, fmt.Sprintf("app-%d", i), 1)
			}
			url := "http://" + metrics + "/metrics"
			before := settleSteady(t, url, tc.periodic)
			const window = 15 * time.Second
			time.Sleep(window)
			after := scrape(t, url, steadyMetrics...)
			delta := map[string]float64{}
			for _, m := range steadyMetrics {
				delta[m] = after[m] - before[m]
			}
			t.Logf("steady state, %d CRs, %s: reconciles %.0f (%.2f per CR), Helm actions %.0f, API requests %.0f (%.2f per CR); totals since start: reconciles %.0f, Helm actions %.0f, API requests %.0f",
				n, window, delta[steadyMetrics[0]], delta[steadyMetrics[0]]/n, delta[steadyMetrics[1]], delta[steadyMetrics[2]], delta[steadyMetrics[2]]/n,
				after[steadyMetrics[0]], after[steadyMetrics[1]], after[steadyMetrics[2]])
			if after["chartkeeper_helm_actions_total"] < n || after["chartkeeper_releases"] < n {
				t.Errorf("metrics count fewer than %d installs or %d releases: %v", n, n, after)
			}
			if delta["chartkeeper_helm_actions_total"] != 0 || delta["rest_client_requests_total"] != 0 {
				t.Errorf("the steady state called Helm or the API server: %v", delta)
			}
			if reconciles := delta["controller_runtime_reconcile_total"]; tc.periodic != (reconciles > 0) {
				t.Errorf("reconciles in the steady state: %.0f (periodic: %v)", reconciles, tc.periodic)
			}
		})
	}
}

// settleSteady waits until the rollouts' last events are over and
// returns the count then: the last status updates (of Deployments, of
// Events) may still arrive, later under load. Settled is two scrapes 2 s
// apart that show no API request and no Helm action, nor (unless
// periodic, when the operator reconciles every second by design) any
// reconcile: an event the operator reacts to reconciles even when it then
// writes nothing. Bounded: if it never settles, the window measures it
// anyway.
func settleSteady(t *testing.T, url string, periodic bool) map[string]float64 {
	t.Helper()
	quiet := []string{"rest_client_requests_total", "chartkeeper_helm_actions_total"}
	if !periodic {
		quiet = append(quiet, "controller_runtime_reconcile_total")
	}
	before := scrape(t, url, steadyMetrics...)
	for range 15 {
		time.Sleep(2 * time.Second)
		now := scrape(t, url, steadyMetrics...)
		settled := true
		for _, m := range quiet {
			settled = settled && now[m] == before[m]
		}
		before = now
		if settled {
			break
		}
	}
	return before
}
