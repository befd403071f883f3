package chaos

import (
	"strings"
	"testing"
	"time"
)

func TestReportFigures(t *testing.T) {
	rep := &Report{Seed: 7, CRs: 4, Namespaces: 2, Faults: []Fault{
		{Kind: KillMidUpgrade, Injected: true, Caught: true, AfterKill: statusPendingUpgrade},
		{Kind: KillMidUpgrade, Injected: true, AfterKill: statusDeployed},
		{Kind: KillMidUninstall, Injected: true, AfterKill: statusNone},
		{Kind: KillMidInstall, Detail: errNoTarget.Error()},
		{Kind: RestartEtcd, Injected: true, Caught: true},
		{Kind: DeleteObject, Injected: true, Caught: true},
	}, Problems: []Problem{{"ns/a", "not Ready"}, {"ns/a", "ConfigMap missing"}, {"Secret ns/x", "leaked"}}}
	w := newWorkload(nil, []string{"ns"}, 2, chaosKinds[:1])
	w.slots[0].live = true
	rep.fill(w, &supervisor{})
	if rep.Kills() != 3 || rep.PendingKills() != 1 || rep.Restarts() != 1 {
		t.Errorf("kills %d (%d left pending), restarts %d; want 3 (1), 1", rep.Kills(), rep.PendingKills(), rep.Restarts())
	}
	if rep.Lost != 2 {
		t.Errorf("lost %d, want 2 (two subjects)", rep.Lost)
	}
	if rep.ReleasesChecked != 2 || rep.LiveChecked != 1 || rep.DeletedChecked != 1 {
		t.Errorf("checked %d (%d live, %d deleted), want 2 (1, 1)", rep.ReleasesChecked, rep.LiveChecked, rep.DeletedChecked)
	}
	kinds, tried, injected, caught := rep.FaultCounts()
	if len(kinds) != 5 || tried[KillMidUpgrade] != 2 || injected[KillMidInstall] != 0 || caught[KillMidUpgrade] != 1 {
		t.Errorf("counts: kinds %v, tried %v, injected %v, caught %v", kinds, tried, injected, caught)
	}
	var out strings.Builder
	rep.Print(&out)
	row := ""
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); strings.HasPrefix(line, string(KillMidUpgrade)) && len(f) > 3 {
			row = strings.Join(f[len(f)-3:], " ")
		}
	}
	if row != "2 2 1" {
		t.Errorf("the mid-upgrade row reads %q, want 2 tried, 2 injected, 1 caught:\n%s", row, out.String())
	}
	for _, want := range []string{"operator kills survived: 3 (1 hit their target state, 1 left a revision pending)", "lost: 2", "PROBLEM Secret ns/x: leaked"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestConfigDefaultsAndErrors(t *testing.T) {
	c, err := Config{Kubeconfig: "k", Operator: []string{"op"}, Chart: "c", WorkDir: "w", Seed: 1}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.CRs != 24 || c.Namespaces != 3 || c.Duration != 3*time.Minute || c.FaultEvery != 4*time.Second || c.MaxConfigMaps != 60 {
		t.Errorf("defaults: %+v", c)
	}
	for name, bad := range map[string]Config{
		"nothing":                  {},
		"more namespaces than crs": {Kubeconfig: "k", Operator: []string{"op"}, Chart: "c", WorkDir: "w", CRs: 2, Namespaces: 3},
		"negative duration":        {Kubeconfig: "k", Operator: []string{"op"}, Chart: "c", WorkDir: "w", Duration: -time.Second},
	} {
		if _, err := bad.withDefaults(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
