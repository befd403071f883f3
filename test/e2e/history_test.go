package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The walkthrough of docs/status-history.md, step by step: a release's
// attempts in status.history (newest first, at most five, secret values
// redacted) and its objects with their readiness in status.inventory
// (the not-ready ones first), as kubectl get -o yaml and kubectl describe
// show them.
func TestHistoryAndInventoryInStatus(t *testing.T) {
	parallel(t, 45*time.Second)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()

	// 1. Install: one attempt, three objects, all ready.
	if err := env.Client.Create(ctx, newApp(ns, "web", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	st := waitReady(t, env, ns, "web", 1)
	yaml := kubectl(t, env, "get", "app", "web", "-n", ns, "-o", "yaml")
	if !strings.Contains(yaml, "  history:\n") || !strings.Contains(yaml, "  inventory:\n") {
		t.Errorf("kubectl get -o yaml shows no status.history or status.inventory:\n%s", yaml)
	}
	checkAttempts(t, st, attempt{"Install", 1, api.AttemptSucceeded, api.ReasonInstallSucceeded})
	if a := st.History; len(a) > 0 {
		if a[0].Chart != "app" || a[0].ChartVersion != "1.0.0" || st.Release == nil || a[0].Digest != st.Release.Digest ||
			a[0].ValuesDigest == "" || a[0].FinishedAt.Before(&a[0].StartedAt) {
			t.Errorf("the install's attempt %+v, status.release %+v", a[0], st.Release)
		}
	}
	checkInventory(t, st.Inventory, 1, 3, 0, "Deployment/web Ready", "Service/web Ready", "ConfigMap/web-config Ready")

	// 2. Pods no node can take: revision 2 is released, its Deployment is
	// listed first, not ready, saying why.
	patchSpec(t, env, ns, "web", map[string]any{"nodeSelector": map[string]any{"chartkeeper.dev/no-such-node": "true"}})
	st = waitStatus(t, env, ns, "web", "the Deployment of revision 2 not ready in status.inventory", func(st api.Status) bool {
		return st.Inventory != nil && st.Inventory.Revision == 2 && st.Inventory.NotReady == 1
	})
	checkAttempts(t, st,
		attempt{"Upgrade", 2, api.AttemptSucceeded, api.ReasonUpgradeSucceeded},
		attempt{"Install", 1, api.AttemptSucceeded, api.ReasonInstallSucceeded})
	checkInventory(t, st.Inventory, 2, 3, 1, "Deployment/web NotReady", "ConfigMap/web-config Ready", "Service/web Ready")
	if e := st.Inventory.Entries; len(e) > 0 && e[0].Message == "" {
		t.Errorf("the not-ready Deployment's entry does not say why: %+v", e[0])
	}
	describe := kubectl(t, env, "describe", "app", "web", "-n", ns)
	for _, want := range [][2]string{{"Inventory", ""}, {"Not Ready", "1"}, {"State", "NotReady"}, {"History", ""}, {"Action", "Upgrade"}} {
		if !describes(describe, want[0], want[1]) {
			t.Errorf("kubectl describe does not show %s: %s:\n%s", want[0], want[1], describe)
		}
	}

	// 3. A password the chart refuses, quoting it: a failed attempt with
	// nothing stored, the password redacted.
	const password = "s3cr3t-pw"
	patchSpec(t, env, ns, "web", map[string]any{"password": password})
	st = waitStatus(t, env, ns, "web", "a failed attempt at the short password", func(st api.Status) bool {
		return len(st.History) > 0 && st.History[0].Result == api.AttemptFailed
	})
	checkAttempts(t, st,
		attempt{"Upgrade", 0, api.AttemptFailed, api.ReasonChartError},
		attempt{"Upgrade", 2, api.AttemptSucceeded, api.ReasonUpgradeSucceeded},
		attempt{"Install", 1, api.AttemptSucceeded, api.ReasonInstallSucceeded})
	if m := st.History[0].Message; !strings.Contains(m, "too short") || strings.Contains(m, password) {
		t.Errorf("the failed attempt's message does not say why, or shows the password: %q", m)
	}
	if js := kubectl(t, env, "get", "app", "web", "-n", ns, "-o", "jsonpath={.status}"); strings.Contains(js, password) {
		t.Errorf("the status shows the password:\n%s", js)
	}

	// 4. Fixed: revision 3 is ready; then two more changes, and the
	// history keeps the five newest attempts.
	patchSpec(t, env, ns, "web", map[string]any{"password": nil, "nodeSelector": nil})
	st = waitReady(t, env, ns, "web", 3)
	checkInventory(t, st.Inventory, 3, 3, 0, "Deployment/web Ready", "Service/web Ready", "ConfigMap/web-config Ready")
	patchSpec(t, env, ns, "web", map[string]any{"data": "v2"})
	waitReady(t, env, ns, "web", 4)
	patchSpec(t, env, ns, "web", map[string]any{"data": "v3"})
	st = waitReady(t, env, ns, "web", 5)
	checkAttempts(t, st,
		attempt{"Upgrade", 5, api.AttemptSucceeded, api.ReasonUpgradeSucceeded},
		attempt{"Upgrade", 4, api.AttemptSucceeded, api.ReasonUpgradeSucceeded},
		attempt{"Upgrade", 3, api.AttemptSucceeded, api.ReasonUpgradeSucceeded},
		attempt{"Upgrade", 0, api.AttemptFailed, api.ReasonChartError},
		attempt{"Upgrade", 2, api.AttemptSucceeded, api.ReasonUpgradeSucceeded})
}

// A release of 500 objects, one of them not ready: status.inventory counts
// them all, lists the not-ready Deployment first, and stays within its
// documented bounds; the whole status, measured as the API server
// returns it, stays under 32 KiB.
func TestLargeReleaseStatusStaysBounded(t *testing.T) {
	parallel(t, 75*time.Second)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	spec := map[string]any{"configMaps": 500, "nodeSelector": map[string]any{"chartkeeper.dev/no-such-node": "true"}}
	if err := env.Client.Create(ctx, newApp(ns, "big", spec)); err != nil {
		t.Fatal(err)
	}
	const total = 503 // the Deployment, the Service, big-config and 500 more ConfigMaps
	st := waitStatus(t, env, ns, "big", "an inventory of 503 objects", func(st api.Status) bool {
		return st.Inventory != nil && st.Inventory.Total == total
	})
	inv := st.Inventory
	if inv.Revision != 1 || inv.Ready != total-1 || inv.NotReady != 1 {
		t.Errorf("inventory counts: revision %d, %d ready, %d not ready; want 1, %d, 1", inv.Revision, inv.Ready, inv.NotReady, total-1)
	}
	if n := len(inv.Entries); n == 0 || n > api.MaxInventoryEntries || inv.Omitted != total-n {
		t.Fatalf("%d entries listed, %d omitted; want 1 to %d listed and the rest counted", n, inv.Omitted, api.MaxInventoryEntries)
	}
	if e := inv.Entries[0]; e.Kind != "Deployment" || e.Name != "big" || e.State != api.ObjectNotReady || e.Message == "" || len(e.Message) > api.MaxObjectMessage {
		t.Errorf("first entry %+v, want the Deployment big, NotReady, saying why", e)
	}
	for _, e := range inv.Entries[1:] {
		if e.State != api.ObjectReady {
			t.Errorf("entry %+v after the not-ready one is not Ready", e)
		}
	}

	raw := kubectl(t, env, "get", "--raw", fmt.Sprintf("/apis/%s/%s/namespaces/%s/apps/big", appGVK.Group, appGVK.Version, ns))
	var obj struct {
		Status struct {
			Inventory json.RawMessage `json:"inventory"`
			History   json.RawMessage `json:"history"`
		} `json:"status"`
	}
	var whole map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &obj); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &whole); err != nil {
		t.Fatal(err)
	}
	t.Logf("status of a %d-object release: %d bytes (inventory %d, %d entries; history %d)",
		total, len(whole["status"]), len(obj.Status.Inventory), len(inv.Entries), len(obj.Status.History))
	if n := len(obj.Status.Inventory); n > api.MaxInventoryBytes {
		t.Errorf("status.inventory is %d bytes, over the documented %d", n, api.MaxInventoryBytes)
	}
	if n := len(whole["status"]); n > 32<<10 {
		t.Errorf("the status is %d bytes, over the documented 32 KiB", n)
	}
}

// attempt is what checkAttempts compares of a status.history entry.
type attempt struct {
	action   string
	revision int
	result   api.AttemptResult
	reason   api.Reason
}

// checkAttempts checks status.history, newest first.
func checkAttempts(t *testing.T, st api.Status, want ...attempt) {
	t.Helper()
	got := make([]attempt, len(st.History))
	for i, a := range st.History {
		got[i] = attempt{a.Action, a.Revision, a.Result, a.Reason}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("status.history:\n got  %v\n want %v", got, want)
	}
}

// checkInventory checks status.inventory's revision and counts, and its
// entries in order as "Kind/name State" (the ready ones in any order).
func checkInventory(t *testing.T, inv *api.Inventory, revision, total, notReady int, want ...string) {
	t.Helper()
	if inv == nil {
		t.Errorf("no status.inventory")
		return
	}
	if inv.Revision != revision || inv.Total != total || inv.NotReady != notReady || inv.Ready != total-notReady {
		t.Errorf("status.inventory of revision %d, %d objects, %d ready, %d not ready; want revision %d, %d, %d, %d",
			inv.Revision, inv.Total, inv.Ready, inv.NotReady, revision, total, total-notReady, notReady)
	}
	var got []string
	for _, e := range inv.Entries {
		got = append(got, fmt.Sprintf("%s/%s %s", e.Kind, e.Name, e.State))
	}
	key := func(s []string) string {
		head, tail := s[:min(notReady, len(s))], append([]string(nil), s[min(notReady, len(s)):]...)
		slices.Sort(tail)
		return strings.Join(append(append([]string(nil), head...), tail...), ", ")
	}
	if key(got) != key(want) {
		t.Errorf("status.inventory.entries: %v, want %v", got, want)
	}
}

// waitStatus waits until the App's status satisfies ok, and returns it.
func waitStatus(t *testing.T, env *testenv.Env, ns, name, what string, ok func(api.Status) bool) api.Status {
	t.Helper()
	var st api.Status
	testenv.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		_, s, err := getApp(ctx, env, ns, name)
		if err != nil {
			return err
		}
		if st = s; !ok(s) {
			return fmt.Errorf("waiting for %s; status: %s", what, mustJSON(s))
		}
		return nil
	})
	return st
}

// kubectl runs bin/kubectl against the shared cluster and returns its output.
func kubectl(t *testing.T, env *testenv.Env, args ...string) string {
	t.Helper()
	// A fresh discovery cache: the shared one (~/.kube/cache) may predate
	// CRDs other tests installed since, and kubectl would not see them.
	cmd := exec.Command(filepath.Join(testenv.BinDir(), "kubectl"), append([]string{"--kubeconfig", env.Kubeconfig, "--cache-dir", t.TempDir()}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// describes reports whether kubectl describe's output has a line with
// label (as describe spells a field: "Not Ready") and value.
func describes(out, label, value string) bool {
	for line := range strings.Lines(out) {
		if l, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && l == label && strings.TrimSpace(v) == value {
			return true
		}
	}
	return false
}
