package e2e

import (
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/chartkeeper/chartkeeper/test/framework/memcgroup"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// In a container with a memory limit (here a memory cgroup of its own,
// which is what a container's limit is to the process inside), the
// operator keeps the Go runtime's memory under 90% of it (GOMEMLIMIT, read
// from its /metrics); without a limit it sets none; --memory-limit-ratio
// changes the share, and 0 turns it off.
func TestOperatorKeepsItsMemoryUnderTheContainerLimit(t *testing.T) {
	parallel(t, quick)
	const limit = 256 << 20
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	kubeconfig := operatorKubeconfig(t, env, testWatches())
	for _, tc := range []struct {
		name    string
		limited bool
		extra   []string
		want    float64
	}{
		{name: "limited, default ratio", limited: true, want: math.Floor(0.9 * limit)},
		{name: "limited, ratio 0.5", limited: true, extra: []string{"--memory-limit-ratio", "0.5"}, want: 0.5 * limit},
		{name: "limited, off", limited: true, extra: []string{"--memory-limit-ratio", "0"}, want: math.MaxInt64},
		{name: "not limited", want: unlimited()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var procs string
			if tc.limited {
				procs = memcgroup.New(t, limit) // before the operator: removed after it stops
			}
			metrics, probe := freeAddr(t), freeAddr(t)
			args := append([]string{"run", "--kubeconfig", kubeconfig, "--watches-file", testWatches(),
				"--health-probe-bind-address", probe, "--metrics-bind-address", metrics}, tc.extra...)
			cmd := exec.Command(operatorBinary(t), args...)
			if procs != "" {
				// Join the cgroup, then become the operator (same PID).
				cmd = exec.Command("sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, procs, operatorBinary(t)}, args...)...)
			}
			cmd.Env = append(withoutEnv(withoutEnv(cmd.Environ(), "GOMEMLIMIT"), "AUTOMEMLIMIT"), "WATCH_NAMESPACE="+env.Namespace(t))
			p := start(t, cmd)
			p.eventually(t, time.Minute, get200("http://"+probe+"/readyz"))
			got := scrape(t, "http://"+metrics+"/metrics", "go_gc_gomemlimit_bytes")["go_gc_gomemlimit_bytes"]
			if got != tc.want {
				t.Errorf("GOMEMLIMIT %.0f bytes, want %.0f", got, tc.want)
			}
			logged := strings.Contains(p.out.String(), `"msg":"soft memory limit"`)
			if wantLog := tc.want != math.MaxInt64; logged != wantLog {
				t.Errorf("log says the soft memory limit: %v, want %v:\n%s", logged, wantLog, p.out.String())
			}
			if err := p.interrupt(t, 30*time.Second); err != nil {
				t.Errorf("stopping: %v", err)
			}
		})
	}
}

// unlimited is the soft limit an operator started beside this test (in its
// cgroup) sets at the default ratio: none, unless the machine runs the test
// itself under a memory limit.
func unlimited() float64 {
	if l, err := memlimit.FromCgroup(); err == nil {
		return math.Floor(0.9 * float64(l))
	}
	return math.MaxInt64
}
