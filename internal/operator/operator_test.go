package operator

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/chartkeeper/chartkeeper/internal/watches"
	"github.com/chartkeeper/chartkeeper/test/framework/childproc"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// waitTimeout bounds every wait for the operator to reach a state.
const waitTimeout = 30 * time.Second

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	testenv.Main(m)
}

// TestRun starts an operator for the repository's WebApp kind against a
// real API server: it serves /healthz and /readyz (ready once its caches
// synced) and its metrics, and stops cleanly when the context ends.
func TestRun(t *testing.T) {
	root := testenv.RepoRoot()
	cfg := testenv.APIServer(t, filepath.Join(root, "config", "crd", "bases"))
	ws, err := watches.Parse([]byte("- group: apps.chartkeeper.dev\n  version: v1alpha1\n  kind: WebApp\n  chart: charts/webapp\n"), root)
	if err != nil {
		t.Fatal(err)
	}
	ports := testenv.FreePorts(t, 2)
	metricsAddr, probeAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	op, err := New(cfg, ws, WithMetricsAddress(metricsAddr), WithProbeAddress(probeAddr), WithPprofAddress("0"))
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- op.Run(ctx) }()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cancel()
			<-done
		}
	})

	for _, path := range []string{"/healthz", "/readyz"} {
		testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
			return childproc.Probe(ctx, "http://"+probeAddr+path)
		})
	}
	// The metrics endpoint serves the controller of the watch.
	controllerLabel := `controller="chartkeeper-WebApp.apps.chartkeeper.dev"`
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
		body, err := get(ctx, "http://"+metricsAddr+"/metrics")
		if err != nil {
			return err
		}
		if !strings.Contains(body, controllerLabel) {
			return fmt.Errorf("/metrics has no series with %s", controllerLabel)
		}
		return nil
	})

	cancel()
	select {
	case err := <-done:
		stopped = true
		if err != nil {
			t.Fatalf("Run() = %v after the context ended, want nil", err)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("Run() did not return within %s of the context ending", waitTimeout)
	}
	for _, addr := range []string{probeAddr, metricsAddr} {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("%s still accepts connections after Run returned", addr)
		}
	}
}

// get returns the body of a GET that answers 200.
func get(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}
