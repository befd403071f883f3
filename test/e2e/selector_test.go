package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// A watch's selector confines the operator to the custom resources it
// selects: others get no finalizer, no status and no release.
func TestSelectorConfinesTheWatch(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-shard-a.yaml"))
	ctx := context.Background()
	mine := newApp(ns, "mine", map[string]any{"replicas": 1})
	mine.SetLabels(map[string]string{"shard": "a"})
	other := newApp(ns, "other", map[string]any{"replicas": 1})
	other.SetLabels(map[string]string{"shard": "b"})
	if err := env.Client.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, mine); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "mine", 1)
	time.Sleep(2 * time.Second)
	u, st, err := getApp(ctx, env, ns, "other")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.GetFinalizers()) != 0 || len(st.Conditions) != 0 || latestReleaseStatus(t, env, ns, "other") != "" {
		t.Errorf("an unselected App was touched: finalizers %v, status %+v", u.GetFinalizers(), st)
	}
	if err := env.Client.Delete(ctx, other); err != nil {
		t.Fatal(err)
	}
}

// Two operators with disjoint selectors split the custom resources: each
// releases its own shard, and a change in one shard waits for its own
// operator, never taken up by the other. Both operators are confined to
// the test's namespace (WATCH_NAMESPACE): other tests' Apps, labelled with
// shards too (TestSelectorConfinesTheWatch), are out of their reach.
func TestShardsSplitTheResources(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	ns := env.Namespace(t)
	ctx := context.Background()
	shardFile := func(s string) string {
		return filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-shard-"+s+".yaml")
	}
	startShard := func(s string) *process {
		return startConfined(t, env, ns, shardFile(s), "--metrics-bind-address", "0")
	}
	startShard("a")
	b := startShard("b")
	names := map[string]string{"a1": "a", "a2": "a", "b1": "b", "b2": "b"}
	for name, shard := range names {
		app := newApp(ns, name, map[string]any{"data": "v1"})
		app.SetLabels(map[string]string{"shard": shard})
		if err := env.Client.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	for name := range names {
		waitReady(t, env, ns, name, 1)
	}

	// With shard b's operator stopped, a change in each shard: only a's is
	// released. b1 is changed first: had shard a's operator seen it, it would
	// have had it before a1's change.
	if err := b.interrupt(t, 30*time.Second); err != nil {
		t.Fatalf("stopping shard b's operator: %v", err)
	}
	patchSpec(t, env, ns, "b1", map[string]any{"data": "v2"})
	patchSpec(t, env, ns, "a1", map[string]any{"data": "v2"})
	waitReady(t, env, ns, "a1", 2)
	time.Sleep(3 * time.Second) // time for a wrong operator to pick b1 up
	u, st, err := getApp(ctx, env, ns, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if st.ObservedGeneration == u.GetGeneration() || len(releaseSecrets(t, env, ns, "b1")) != 1 {
		t.Fatalf("shard a's operator acted on b1: observed generation %d of %d, %d revisions",
			st.ObservedGeneration, u.GetGeneration(), len(releaseSecrets(t, env, ns, "b1")))
	}

	startShard("b")
	waitReady(t, env, ns, "b1", 2)
	for name, want := range map[string]int{"a1": 2, "a2": 1, "b1": 2, "b2": 1} {
		if got := len(releaseSecrets(t, env, ns, name)); got != want {
			t.Errorf("%s has %d revisions, want %d", name, got, want)
		}
	}
	deleteApps(t, env, ns) // both operators run: each removes its shard's finalizers
}
