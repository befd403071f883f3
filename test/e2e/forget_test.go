package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Nothing is kept for a resource that is gone, whichever way it goes: the
// operator's in-memory stores (chartkeeper_tracked_resources: the release
// engine's memos and expectations, the controllers' status book and
// release index) and its metrics (chartkeeper_releases counts each
// resource by state) hold nothing of it afterwards. Two resources per
// case: one Ready, one whose Pods no node takes (its Pods' reasons are
// polled and remembered).

// TestNothingKeptForAResourceWhoseFinalizerWasRemovedByHand: the
// finalizer is removed by hand and the resource deleted; the operator
// never runs the uninstall, it only finds the resource gone.
func TestNothingKeptForAResourceWhoseFinalizerWasRemovedByHand(t *testing.T) {
	parallel(t, 40*time.Second)
	metricsAddr := freeAddr(t)
	env, ns, _ := appFixture(t, testWatches(), "--metrics-bind-address", metricsAddr)
	url := "http://" + metricsAddr + "/metrics"
	names := startTwo(t, env, ns, url)

	ctx := context.Background()
	for _, name := range names {
		removeFinalizersAndDelete(ctx, t, env, ns, name)
		waitGone(t, env, appGVK, ns, name, time.Minute)
	}
	waitNothingTracked(t, url)
}

// TestNothingKeptForAResourceRelabelledToAnotherShard: the resource is
// relabelled so that this operator's selector no longer selects it
// (another shard's operator takes it); this one lets go of it.
func TestNothingKeptForAResourceRelabelledToAnotherShard(t *testing.T) {
	parallel(t, 40*time.Second)
	metricsAddr := freeAddr(t)
	env, ns, _ := appFixture(t, appWatches(t, "  selector:\n    matchLabels: {shard: a}\n"), "--metrics-bind-address", metricsAddr)
	url := "http://" + metricsAddr + "/metrics"
	names := startTwo(t, env, ns, url, "shard", "a")

	ctx := context.Background()
	for _, name := range names {
		setShard(ctx, t, env, ns, name, "b")
		// Back to this shard at the end, so that its operator uninstalls
		// the release when the fixture deletes the resource.
		t.Cleanup(func() { setShard(context.Background(), t, env, ns, name, "a") })
	}
	waitNothingTracked(t, url)
}

// startTwo creates a Ready App and one whose Pods no node can take, with
// labels (pairs), waits
// until both are released and checks that the operator's stores hold
// them: else their being empty afterwards would prove nothing.
func startTwo(t *testing.T, env *testenv.Env, ns, url string, labels ...string) []string {
	t.Helper()
	ctx := context.Background()
	specs := map[string]map[string]any{
		"ready":   {"replicas": 1},
		"waiting": {"replicas": 1, "nodeSelector": map[string]any{"chartkeeper.dev/no-such-node": "true"}},
	}
	names := []string{"ready", "waiting"}
	for _, name := range names {
		app := newApp(ns, name, specs[name])
		lbl := map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			lbl[labels[i]] = labels[i+1]
		}
		app.SetLabels(lbl)
		if err := env.Client.Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	waitReady(t, env, ns, "ready", 1)
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "waiting")
		if err != nil {
			return err
		}
		if st.Release == nil || st.Release.Revision != 1 {
			return fmt.Errorf("not released yet: %+v", st.Conditions)
		}
		return nil
	})
	held := trackedStores(t, url)
	for _, store := range []string{"states", "statuses", "releaseIndex", "manifests", "drift"} {
		if held[store] < 2 {
			t.Fatalf("before: store %s holds %v resources, want 2 (all: %v): the check afterwards would prove nothing", store, held[store], held)
		}
	}
	t.Logf("before: %v", held)
	return names
}

// removeFinalizersAndDelete removes the resource's finalizers by hand and
// deletes it, at the version without them: should the operator put its
// finalizer back in between, the deletion fails and both are done again.
func removeFinalizersAndDelete(ctx context.Context, t *testing.T, env *testenv.Env, ns, name string) {
	t.Helper()
	for range 10 {
		app := newApp(ns, name, nil)
		if err := env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`))); err != nil {
			t.Fatalf("removing the finalizers of %s: %v", name, err)
		}
		rv := app.GetResourceVersion()
		err := env.Client.Delete(ctx, app, client.Preconditions{ResourceVersion: &rv})
		if err == nil || apierrors.IsNotFound(err) {
			return
		}
		if !apierrors.IsConflict(err) {
			t.Fatalf("deleting %s: %v", name, err)
		}
	}
	t.Fatalf("%s: its finalizer came back before each of 10 deletions", name)
}

// setShard labels the App with shard.
func setShard(ctx context.Context, t *testing.T, env *testenv.Env, ns, name, shard string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"labels":{"shard":%q}}}`, shard)
	if err := env.Client.Patch(ctx, newApp(ns, name, nil), client.RawPatch(types.MergePatchType, []byte(patch))); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("relabelling %s: %v", name, err)
	}
}

// waitNothingTracked waits until every store of the operator holds
// nothing (chartkeeper_tracked_resources) and chartkeeper_releases counts
// no resource, and fails naming what is still held.
func waitNothingTracked(t *testing.T, url string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		held := trackedStores(t, url)
		var left []string
		for store, n := range held {
			if n != 0 {
				left = append(left, fmt.Sprintf("%s=%v", store, n))
			}
		}
		if n := scrape(t, url, "chartkeeper_releases")["chartkeeper_releases"]; n != 0 {
			left = append(left, fmt.Sprintf("chartkeeper_releases counts %v resources", n))
		}
		if len(left) > 0 {
			sort.Strings(left)
			return fmt.Errorf("the operator still holds: %s", strings.Join(left, ", "))
		}
		return nil
	})
}

// trackedStores reads chartkeeper_tracked_resources, by store.
func trackedStores(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `chartkeeper_tracked_resources{store="`)
		if !ok {
			continue
		}
		store, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("chartkeeper_tracked_resources{store=%q}: %v", store, err)
		}
		out[store] = v
	}
	if len(out) == 0 {
		t.Fatal("no chartkeeper_tracked_resources on the metrics endpoint")
	}
	return out
}
