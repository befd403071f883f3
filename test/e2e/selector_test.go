package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/testenv"
)

// A watch's selector confines the operator to the custom resources it
// selects: others get no finalizer, no status and no release.
func TestSelectorConfinesTheWatch(t *testing.T) {
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
