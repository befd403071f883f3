package release

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestPushAttemptKeepsTheNewest(t *testing.T) {
	n := func(revs ...int) []api.Attempt {
		out := make([]api.Attempt, len(revs))
		for i, r := range revs {
			out[i] = api.Attempt{Revision: r}
		}
		return out
	}
	for _, c := range []struct {
		name    string
		history []api.Attempt
		want    string
	}{
		{"first", nil, "[9]"},
		{"newest first", n(2, 1), "[9 2 1]"},
		{"one short of the bound", n(4, 3, 2, 1), "[9 4 3 2 1]"},
		{"at the bound: the oldest goes", n(5, 4, 3, 2, 1), "[9 5 4 3 2]"},
		{"over the bound (an older status): cut", n(7, 6, 5, 4, 3, 2, 1), "[9 7 6 5 4]"},
	} {
		got := pushAttempt(c.history, api.Attempt{Revision: 9})
		var revs []int
		for _, a := range got {
			revs = append(revs, a.Revision)
		}
		if fmt.Sprint(revs) != c.want {
			t.Errorf("%s: %v, want %s", c.name, revs, c.want)
		}
	}
}

func TestInventoryOf(t *testing.T) {
	ob := func(kind, name string, state api.ObjectState, why string) observedObject {
		gv := schema.GroupVersion{Version: "v1"}
		if kind == "Deployment" {
			gv.Group = "apps"
		}
		return observedObject{object: object{GVK: gv.WithKind(kind), Namespace: "ns", Name: name}, state: state, why: why}
	}
	many := func(n int, name string) []observedObject {
		out := make([]observedObject, n)
		for i := range out {
			out[i] = ob("ConfigMap", fmt.Sprintf("%s-%03d", name, i), api.ObjectReady, "")
		}
		return out
	}
	long := strings.Repeat("x", 1000)
	for _, c := range []struct {
		name                             string
		objs                             []observedObject
		ready, notReady, listed, omitted int
		first                            string
	}{
		{"none", nil, 0, 0, 0, 0, ""},
		{"worst first, then by kind and name", []observedObject{
			ob("Service", "web", api.ObjectReady, ""),
			ob("ConfigMap", "web", api.ObjectReady, ""),
			ob("Deployment", "web", api.ObjectNotReady, "Deployment web: InProgress: Available: 0/1"),
			ob("Job", "migrate", api.ObjectFailed, "Job migrate: Failed: BackoffLimitExceeded"),
			ob("Secret", "gone", api.ObjectMissing, ""),
		}, 2, 3, 5, 0, "Secret/gone Missing ; Job/migrate Failed Failed: BackoffLimitExceeded; Deployment/web NotReady InProgress: Available: 0/1; ConfigMap/web Ready ; Service/web Ready "},
		{"500 objects: the bound on entries, every object counted", append(many(499, "cm"), ob("Deployment", "web", api.ObjectNotReady, "x")),
			499, 1, api.MaxInventoryEntries, 500 - api.MaxInventoryEntries, "Deployment/web NotReady x"},
		{"long messages: the bound on bytes", func() []observedObject {
			out := make([]observedObject, 200)
			for i := range out {
				out[i] = ob("Deployment", fmt.Sprintf("%s-%03d", strings.Repeat("n", 200), i), api.ObjectNotReady, long)
			}
			return out
		}(), 0, 200, 0, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			inv := inventoryOf(3, c.objs)
			if inv.Revision != 3 || inv.Total != len(c.objs) || inv.Ready != c.ready || inv.NotReady != c.notReady {
				t.Errorf("counts %+v, want %d objects, %d ready, %d not", inv, len(c.objs), c.ready, c.notReady)
			}
			if inv.Omitted != inv.Total-len(inv.Entries) {
				t.Errorf("%d omitted, %d listed of %d", inv.Omitted, len(inv.Entries), inv.Total)
			}
			if c.listed > 0 && len(inv.Entries) != c.listed {
				t.Errorf("%d listed, want %d", len(inv.Entries), c.listed)
			}
			if size := len(mustMarshal(t, inv)); size > api.MaxInventoryBytes || len(inv.Entries) > api.MaxInventoryEntries {
				t.Errorf("%d bytes, %d entries: over the bounds", size, len(inv.Entries))
			}
			for _, e := range inv.Entries {
				if len(e.Message) > api.MaxObjectMessage {
					t.Errorf("message of %d bytes", len(e.Message))
				}
			}
			var got []string
			for _, e := range inv.Entries {
				got = append(got, fmt.Sprintf("%s/%s %s %s", e.Kind, e.Name, e.State, e.Message))
			}
			if c.first != "" && !strings.HasPrefix(strings.Join(got, "; "), c.first) {
				t.Errorf("entries %v\nwant them to start %s", got, c.first)
			}
		})
	}
}

// attempts describes status.history as "Action revision Result Reason".
func (m *machine) attempts() string {
	var out []string
	for _, a := range m.st.History {
		out = append(out, fmt.Sprintf("%s %d %s %s", a.Action, a.Revision, a.Result, a.Reason))
	}
	return strings.Join(out, "; ")
}

func TestMachineRecordsAttemptsAndInventory(t *testing.T) {
	m := newMachine(t, nil)
	m.run(5)
	m.setSpec("v2")
	m.clock.Step(time.Minute)
	m.run(5)
	if got, want := m.attempts(), "Upgrade 2 Succeeded UpgradeSucceeded; Install 1 Succeeded InstallSucceeded"; got != want {
		t.Errorf("history %s, want %s", got, want)
	}
	up, in := m.st.History[0], m.st.History[1]
	if up.Chart != "app" || up.ChartVersion != "1.0.0" || up.Digest != m.st.Release.Digest || up.ValuesDigest == "" ||
		up.ValuesDigest == in.ValuesDigest || !up.StartedAt.After(in.FinishedAt.Time) {
		t.Errorf("the upgrade's attempt %+v after the install's %+v (status.release %+v)", up, in, m.st.Release)
	}
	inv := m.st.Inventory
	if inv == nil || inv.Revision != 2 || inv.Total != 1 || inv.Ready != 1 || len(inv.Entries) != 1 ||
		inv.Entries[0] != (api.InventoryEntry{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: "app", State: api.ObjectReady}) {
		t.Errorf("inventory %+v", inv)
	}
	// Steady: nothing new is recorded, however often it is stepped.
	before := *m.st.DeepCopy()
	m.run(3)
	if fmt.Sprint(before.History, before.Inventory) != fmt.Sprint(m.st.History, m.st.Inventory) {
		t.Errorf("a steady step changed the history or inventory:\n%+v %+v\n%+v %+v", before.History, before.Inventory, m.st.History, m.st.Inventory)
	}
}

func TestMachineHistoryOfFailuresIsBounded(t *testing.T) {
	m := newMachine(t, nil) // retries: 2, backoff 10s doubling
	m.run(5)
	m.setSpec("fail-me")
	m.run(5)
	m.clock.Step(10 * time.Second)
	m.run(5)
	m.clock.Step(20 * time.Second)
	m.run(5)
	// Install, then three rounds of a failed upgrade and its rollback: the
	// five newest.
	want := "Rollback 7 Succeeded RollbackSucceeded; Upgrade 6 Failed UpgradeFailed; Rollback 5 Succeeded RollbackSucceeded; " +
		"Upgrade 4 Failed UpgradeFailed; Rollback 3 Succeeded RollbackSucceeded"
	if got := m.attempts(); got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
	if msg := m.st.History[1].Message; !strings.Contains(msg, `data "fail-me" is not allowed`) {
		t.Errorf("the failed upgrade's message: %q", msg)
	}
}

func TestMachineReadinessTimeoutFailsTheAttempt(t *testing.T) {
	m := newMachine(t, nil)
	m.run(5)
	m.engine.ready.set("ns/app", types.UID("uid-app"), readyAt{rv: "1", current: false, why: "Deployment app: InProgress: 0 of 1 available"})
	m.setValues(map[string]any{"data": "v2", "deploy": true})
	m.run(3)
	inv := m.st.Inventory
	if inv == nil || inv.Revision != 2 || inv.NotReady != 1 || inv.Entries[0].Kind != "Deployment" ||
		inv.Entries[0].State != api.ObjectNotReady || inv.Entries[0].Message != "InProgress: 0 of 1 available" {
		t.Errorf("inventory %+v", inv)
	}
	m.clock.Step(6 * time.Minute)
	m.run(3)
	want := "Rollback 3 Succeeded RollbackSucceeded; Upgrade 2 Failed ReadinessTimeout; Install 1 Succeeded InstallSucceeded"
	if got := m.attempts(); got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
}

func TestMachineUninstallClearsTheInventory(t *testing.T) {
	m := newMachine(t, func(p *watches.Policy) { p.UpgradeStrategy = watches.StrategyUninstall })
	m.run(5)
	m.setSpec("fail-me")
	m.run(5)
	if m.st.Inventory != nil {
		t.Errorf("inventory after the uninstall: %+v", m.st.Inventory)
	}
	if got, want := m.attempts(), "Uninstall 2 Succeeded UninstallSucceeded; Upgrade 2 Failed UpgradeFailed; Install 1 Succeeded InstallSucceeded"; got != want {
		t.Errorf("history\n got %s\nwant %s", got, want)
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
