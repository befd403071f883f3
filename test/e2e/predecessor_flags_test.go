package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A Deployment moved over from helm-operator-plugins or operator-sdk's Helm
// operator keeps its args: their flag names start chartkeeper and mean what
// they meant. --reconcile-period is the period of watches without their
// own (testWatches() sets none), --max-concurrent-reconciles yields to a
// watch's own (testWatches() says 4), --metrics-addr is the metrics address.
func TestPredecessorRunFlags(t *testing.T) {
	parallel(t, 20*time.Second)
	metrics := freeAddr(t)
	env, ns, _ := appFixture(t, testWatches(),
		"--metrics-addr", metrics, "--reconcile-period", "1s", "--max-concurrent-reconciles", "2",
		"--suppress-override-values", "--zap-log-level", "info")
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "flags", map[string]any{"data": "x"})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "flags", 1)
	url := "http://" + metrics + "/metrics"
	if got := concurrency(t, url); got != 4 {
		t.Errorf("controller_runtime_max_concurrent_reconciles %v, want the watch's own 4", got)
	}
	// Nothing changes from here: only the period reconciles.
	before := scrape(t, url, "controller_runtime_reconcile_total")["controller_runtime_reconcile_total"]
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		if n := scrape(t, url, "controller_runtime_reconcile_total")["controller_runtime_reconcile_total"]; n < before+3 {
			return fmt.Errorf("%.0f reconciles since Ready, want 3 periodic ones", n-before)
		}
		return nil
	})
}

// concurrency reads the App controller's controller_runtime_max_concurrent_reconciles.
func concurrency(t *testing.T, url string) float64 {
	t.Helper()
	for _, line := range strings.Split(scrapeRaw(t, url), "\n") {
		if strings.HasPrefix(line, "controller_runtime_max_concurrent_reconciles{") && strings.Contains(line, "App") {
			var v float64
			f := strings.Fields(line)
			_, _ = fmt.Sscan(f[len(f)-1], &v)
			return v
		}
	}
	t.Fatalf("no controller_runtime_max_concurrent_reconciles for App at %s", url)
	return 0
}
