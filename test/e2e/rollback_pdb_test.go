package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// helmRevision is a line of `helm history -o json`.
type helmRevision struct {
	Revision    int    `json:"revision"`
	Status      string `json:"status"`
	Description string `json:"description"`
}

func helmHistory(t *testing.T, env *testenv.Env, ns, name string) []helmRevision {
	t.Helper()
	var hist []helmRevision
	if err := json.Unmarshal([]byte(helmCmd(t, env, "history", name, "-n", ns, "--max", "100", "-o", "json")), &hist); err != nil {
		t.Fatal(err)
	}
	return hist
}

// A chart whose PodDisruptionBudget is rendered only above one replica
// (test/corpus/webserver), packaged with create-api and run as its
// generated ServiceAccount: 1 replica, then 2 (the PDB appears), then one
// replica with an image pull policy the API server refuses. That upgrade
// fails before it could delete the PDB, so the rollback to revision 2
// brings back an object revision 3 does not name while it is live: Helm
// v3.22 patches it clearing resourceVersion, which a PDB refuses, and the
// engine took the failed revision, marked superseded by Helm, for a
// deployed one to roll back to, and looped. Now: the rollback succeeds
// once, the PDB is patched in place, asking for 2 replicas again is Ready
// with nothing rolled back, and a new spec is an ordinary upgrade.
func TestFailedUpgradeRollsBackOnceBringingBackThePDB(t *testing.T) {
	parallel(t, 90*time.Second)
	env := testenv.Cluster(t)
	proj := t.TempDir()
	chartkeeper(t, 0, "create-api", "--chart", filepath.Join(testenv.RepoRoot(), "test", "corpus", "webserver"),
		"--group", "rollback.chartkeeper.dev", "--version", "v1alpha1", "--kind", "WebServer", "--project-dir", proj)
	// One remediation per spec: the rollback is the last word on the refused one.
	wf := filepath.Join(proj, "watches.yaml")
	w := readFile(t, wf)
	if err := os.WriteFile(wf, append(w, []byte("  remediation:\n    retries: 0\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	ns, s := runPackaged(t, env, proj)
	gvk, name := s.GroupVersionKind(), s.GetName()
	owner := fmt.Sprintf("%s/%s/%s/%s", gvk.Group, gvk.Kind, ns, name)
	ctx := context.Background()
	if err := env.Client.Create(ctx, s); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, gvk, ns, name, 1)
	patchCR(t, env, gvk, ns, name, map[string]any{"replicaCount": 2})
	waitCRRevision(t, env, gvk, ns, name, 2)
	pdb := releasedUID(t, env, ns, owner, "PodDisruptionBudget")

	patchCR(t, env, gvk, ns, name, map[string]any{"replicaCount": 1, "image": map[string]any{"pullPolicy": "Sometimes"}})
	st := waitCondition(t, env, gvk, ns, name, api.ConditionRemediated, "True", api.ReasonRollbackSucceeded, "rolled back to revision 2")
	if c := condition(st, api.ConditionReleased); c.Reason != string(api.ReasonUpgradeFailed) || !strings.Contains(c.Message, "imagePullPolicy") {
		t.Errorf("Released %s: %s, want UpgradeFailed naming imagePullPolicy", c.Reason, c.Message)
	}
	if got := releasedUID(t, env, ns, owner, "PodDisruptionBudget"); got != pdb {
		t.Errorf("the rollback recreated the PDB: uid %s, was %s", got, pdb)
	}
	want := "1 superseded, 2 superseded, 3 failed, 4 deployed"
	// Nothing more happens to the refused spec (retries: 0): no rollback
	// of a rollback, no rollback to the failed revision.
	time.Sleep(5 * time.Second)
	if got := historyLine(helmHistory(t, env, ns, name)); got != want {
		t.Fatalf("history %s, want %s", got, want)
	}

	// Revision 2's spec again: the release holds it (revision 4).
	patchCR(t, env, gvk, ns, name, map[string]any{"replicaCount": 2, "image": map[string]any{"pullPolicy": "IfNotPresent"}})
	waitCRRevision(t, env, gvk, ns, name, 4)
	if got := historyLine(helmHistory(t, env, ns, name)); got != want {
		t.Errorf("history %s after the spec of revision 2 again, want %s", got, want)
	}
	// A new spec: an upgrade.
	patchCR(t, env, gvk, ns, name, map[string]any{"replicaCount": 3})
	waitCRRevision(t, env, gvk, ns, name, 5)
	if got, want := historyLine(helmHistory(t, env, ns, name)), "1 superseded, 2 superseded, 3 failed, 4 superseded, 5 deployed"; got != want {
		t.Errorf("history %s after a new spec, want %s", got, want)
	}
	if got := releasedUID(t, env, ns, owner, "PodDisruptionBudget"); got != pdb {
		t.Errorf("the PDB was recreated: uid %s, was %s", got, pdb)
	}
}

func historyLine(hist []helmRevision) string {
	parts := make([]string, len(hist))
	for i, r := range hist {
		parts[i] = fmt.Sprintf("%d %s", r.Revision, r.Status)
	}
	return strings.Join(parts, ", ")
}

// releasedUID is the UID of the one released object of kind.
func releasedUID(t *testing.T, env *testenv.Env, ns, owner, kind string) types.UID {
	t.Helper()
	var found []types.UID
	for _, o := range ownedObjects(t, env, ns, owner) {
		if o.GetKind() == kind {
			found = append(found, o.GetUID())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d released %s objects, want 1", len(found), kind)
	}
	return found[0]
}

// waitCondition waits until the resource's condition typ has status and
// reason for its current generation, its message naming what, and returns
// the resource's status.
func waitCondition(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name, typ string, status metav1.ConditionStatus, reason api.Reason, what string) api.Status {
	t.Helper()
	var st api.Status
	testenv.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		u, s, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			return err
		}
		st = s
		c := condition(s, typ)
		if c.Status != status || c.Reason != string(reason) || c.ObservedGeneration != u.GetGeneration() || !strings.Contains(c.Message, what) {
			return fmt.Errorf("want %s %s %s naming %q at generation %d: %+v", typ, status, reason, what, u.GetGeneration(), s.Conditions)
		}
		return nil
	})
	return st
}
