package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Lease timing of the leader-election test (flags of chartkeeper run).
const (
	testLease   = 6 * time.Second
	testRenew   = 4 * time.Second
	testRetry   = time.Second
	leaseMetric = "leader_election_master_status"
	reconciles  = "controller_runtime_reconcile_total"
)

// Two replicas with leader election: only the leader reconciles; when it is
// killed (SIGKILL: it cannot release the Lease) the standby takes over
// within the lease time, and every spec change still makes exactly one
// revision: nothing is done twice. Both replicas are confined to the
// test's namespace (WATCH_NAMESPACE: App is other tests' kind too); the
// Lease, the ServiceAccount and its role are the test's own.
func TestLeaderElectionHandsOver(t *testing.T) {
	parallel(t, 20*time.Second)
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	ns := env.Namespace(t)
	id := newOperatorIdentity(t, env, testWatches())
	ctx := context.Background()
	type replica struct {
		p       *process
		metrics string
	}
	startReplica := func() replica {
		m := freeAddr(t)
		p := startOperatorEnv(t, []string{"WATCH_NAMESPACE=" + ns}, id.kubeconfig, testWatches(), "--metrics-bind-address", m,
			"--leader-elect", "--leader-election-namespace", id.namespace, "--leader-election-id", "e2e-"+ns,
			"--leader-elect-lease-duration", testLease.String(), "--leader-elect-renew-deadline", testRenew.String(),
			"--leader-elect-retry-period", testRetry.String())
		return replica{p: p, metrics: "http://" + m + "/metrics"}
	}
	a, b := startReplica(), startReplica()
	var leader, standby replica
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		la, lb := metric(ctx, a.metrics, leaseMetric), metric(ctx, b.metrics, leaseMetric)
		switch {
		case la == 1 && lb == 0:
			leader, standby = a, b
		case lb == 1 && la == 0:
			leader, standby = b, a
		default:
			return fmt.Errorf("leader status %v and %v, want one leader", la, lb)
		}
		return nil
	})
	t.Cleanup(func() { deleteApps(t, env, ns) }) // runs while a replica still does

	for i := range 3 {
		if err := env.Client.Create(ctx, newApp(ns, fmt.Sprintf("le-%d", i), map[string]any{"data": "v1"})); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		waitReady(t, env, ns, fmt.Sprintf("le-%d", i), 1)
	}
	if n := metric(ctx, standby.metrics, reconciles); n != 0 {
		t.Errorf("the standby reconciled %v times, want 0", n)
	}
	if n := metric(ctx, leader.metrics, reconciles); n < 3 {
		t.Errorf("the leader reconciled %v times, want at least 3", n)
	}

	// Kill the leader, then change a spec at once: the standby must take
	// over and carry it out.
	if err := syscall.Kill(-leader.p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	patchSpec(t, env, ns, "le-0", map[string]any{"data": "v2"})
	var tookOver time.Duration
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		if metric(ctx, standby.metrics, leaseMetric) != 1 {
			return fmt.Errorf("the standby is not leading yet")
		}
		tookOver = time.Since(killed)
		return nil
	})
	t.Logf("the standby led %.1fs after the leader was killed (lease %s, retry %s)", tookOver.Seconds(), testLease, testRetry)
	// The standby polls every retry period and may have seen the old
	// leader's renewal just before the kill; 5s more for a loaded machine.
	if limit := testLease + 2*testRetry + 5*time.Second; tookOver > limit {
		t.Errorf("handover took %s, more than %s", tookOver, limit)
	}
	st := waitReady(t, env, ns, "le-0", 2)
	if st.Release.Revision != 2 {
		t.Errorf("le-0 at revision %d after one change, want 2", st.Release.Revision)
	}
	for i := range 3 {
		name := fmt.Sprintf("le-%d", i)
		want := 1
		if i == 0 {
			want = 2
		}
		if got := len(releaseSecrets(t, env, ns, name)); got != want {
			t.Errorf("%s has %d revisions, want %d: an action was done twice", name, got, want)
		}
	}
}

// metric sums a Prometheus counter or gauge over its label sets from a
// metrics endpoint (0 when absent or unreachable).
func metric(ctx context.Context, url, name string) float64 {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(io.LimitReader(resp.Body, 8<<20))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		fields := strings.Fields(line)
		if v, err := strconv.ParseFloat(fields[len(fields)-1], 64); err == nil {
			sum += v
		}
	}
	return sum
}
