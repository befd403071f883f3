package chaos

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// fakeCluster restarts and, if pause is set, pauses nothing.
type fakeCluster struct{}

func (fakeCluster) Restart(context.Context, string, time.Duration) error { return nil }

type fakePauser struct{ fakeCluster }

func (fakePauser) Pause(context.Context, string, time.Duration) error { return nil }

func TestRoundComposition(t *testing.T) {
	count := func(ks []FaultKind, k FaultKind) int {
		n := 0
		for _, x := range ks {
			if x == k {
				n++
			}
		}
		return n
	}
	in := &injector{cfg: Config{Faults: AllFaults(), KillWeight: 2, Cluster: fakeCluster{}}}
	r := in.round()
	if count(r, KillMidDrift) != 2 || count(r, RestartEtcd) != 1 || count(r, PauseEtcd) != 0 {
		t.Errorf("a cluster that cannot pause, kill weight 2: %v", r)
	}
	in.cfg.Cluster = fakePauser{}
	if r := in.round(); count(r, PauseAPIServer) != 1 || len(r) != 7*2+6 {
		t.Errorf("a cluster that pauses: %d faults %v, want 20", len(r), r)
	}
	in.cfg = Config{Faults: ClassicFaults(), KillWeight: 1}
	if r := in.round(); len(r) != 6 || slices.Contains(r, RestartAPIServer) {
		t.Errorf("no cluster: %v", r)
	}
}

func TestQueueDepth(t *testing.T) {
	body := `# HELP workqueue_depth Current depth of workqueue
workqueue_depth{controller="chartkeeper-Chaos.chaos.chartkeeper.dev",name="chartkeeper-Chaos.chaos.chartkeeper.dev"} 3
workqueue_depth{controller="x",name="valuesources"} 40
workqueue_depth{controller="chartkeeper-ChaosKept.chaos.chartkeeper.dev",name="chartkeeper-ChaosKept.chaos.chartkeeper.dev"} 2
workqueue_adds_total{name="chartkeeper-Chaos.chaos.chartkeeper.dev"} 7
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) }))
	defer srv.Close()
	d, err := queueDepth(context.Background(), srv.URL)
	if err != nil || d != 5 {
		t.Errorf("depth %v, %v; want 5", d, err)
	}
	body = "go_goroutines 7\n"
	if _, err := queueDepth(context.Background(), srv.URL); err == nil {
		t.Error("no controller queue yet (not the leader): want an error, not 0")
	}
}

func TestKept(t *testing.T) {
	for v, want := range map[string]bool{"keep": true, " Keep ": true, "": false, "delete": false} {
		o := &metav1.ObjectMeta{Annotations: map[string]string{resourcePolicy: v}}
		if kept(o) != want {
			t.Errorf("%q: kept %v", v, !want)
		}
	}
}

func TestWatchesAndSlots(t *testing.T) {
	chart, err := filepath.Abs(filepath.Join("..", "e2e", "testdata", "charts", "app"))
	if err != nil {
		t.Fatal(err)
	}
	path, err := writeWatches(t.TempDir(), chart, chaosKinds)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := watches.Load(path)
	if err != nil {
		t.Fatalf("the chaos watches.yaml does not load: %v", err)
	}
	if len(ws) != 3 || ws[1].Kind != "ChaosKept" || ws[2].Kind != "ChaosHooked" {
		t.Errorf("watches: %+v", ws)
	}
	w := newWorkload(nil, []string{"a", "b", "c", "d"}, 24, chaosKinds)
	per := map[string]int{}
	names := map[string]bool{}
	for _, s := range w.slots {
		per[s.kind.gvk.Kind+"/"+s.key.Namespace]++
		if names[s.key.String()] {
			t.Errorf("two slots named %s", s.key)
		}
		names[s.key.String()] = true
	}
	if len(per) != 12 {
		t.Errorf("3 kinds × 4 namespaces: %v", per)
	}
}

func TestScaleConfig(t *testing.T) {
	base := Config{Kubeconfig: "k", Operator: []string{"op"}, Chart: "c", WorkDir: "w", Seed: 1}
	c, err := base.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Kinds != 1 || !slices.Equal(c.Faults, ClassicFaults()) || c.MaxDuration != 3*c.Duration || c.CatchTimeout != catchTimeout {
		t.Errorf("defaults: kinds %d, faults %v, max %s, catch %s", c.Kinds, c.Faults, c.MaxDuration, c.CatchTimeout)
	}
	for name, mod := range map[string]func(*Config){
		"four kinds":        func(c *Config) { c.Kinds = 4 },
		"unknown fault":     func(c *Config) { c.Faults = []FaultKind{"flood"} },
		"max below minimum": func(c *Config) { c.Duration, c.MaxDuration = time.Minute, time.Second },
	} {
		bad := base
		mod(&bad)
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestReportScaleFigures(t *testing.T) {
	rep := &Report{Seed: 9, CRs: 3, Namespaces: 1, Kinds: 2, KindNames: []string{"Chaos", "ChaosKept"}, SettleSeconds: 12.5, KeptObjects: 4, Faults: []Fault{
		{Kind: KillMidUpgrade, Injected: true, Caught: true, AfterKill: statusPendingUpgrade, Detail: "to leave a revision to unlock"},
		{Kind: KillMidUnlock, Injected: true, Caught: true, AfterKill: statusFailed},
		{Kind: KillMidDrift, Injected: true, AfterKill: "restored 3 of 3"},
		{Kind: KillMidHook, Detail: errNoTarget.Error()},
		{Kind: PauseEtcd, Injected: true, Caught: true},
		{Kind: PauseAPIServer, Injected: true, Caught: true},
		{Kind: RestartEtcd, Injected: true, Caught: true},
	}}
	rep.fill(newWorkload(nil, []string{"ns"}, 3, chaosKinds[:2]), &supervisor{})
	if rep.Kills() != 3 || rep.CaughtKills() != 2 || rep.PendingKills() != 1 || rep.Pauses() != 2 || rep.Restarts() != 1 {
		t.Errorf("kills %d (caught %d, pending %d), pauses %d, restarts %d; want 3 (2, 1), 2, 1",
			rep.Kills(), rep.CaughtKills(), rep.PendingKills(), rep.Pauses(), rep.Restarts())
	}
	var out strings.Builder
	rep.Print(&out)
	for _, want := range []string{"of 2 kinds [Chaos ChaosKept]", "time to converge after the last fault: 12.5s (settled); kept objects seen: 4", "pauses survived: 2"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
