package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// timeoutWatches is the watch of HookApp: a 20s action timeout, one worker.
func timeoutWatches() string {
	return filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-timeout.yaml")
}

var hookAppGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "HookApp"}

// A chart hook Job that never completes (its pod is Pending: no node
// matches its nodeSelector) is bounded by the watch's timeout: the install
// fails saying it timed out waiting for the hook Job, and the one worker of
// the kind is freed, so another resource of the same kind, its hook turned
// off by values, still installs and becomes Ready.
func TestHookThatNeverCompletesTimesOut(t *testing.T) {
	parallel(t, 25*time.Second)
	env, ns, _ := kindFixture(t, timeoutWatches(), hookAppGVK)
	ctx := context.Background()

	if err := env.Client.Create(ctx, newCR(hookAppGVK, ns, "stuck", map[string]any{})); err != nil {
		t.Fatal(err)
	}
	// The one worker is busy with stuck's install, waiting for its hook.
	testenv.Eventually(t, time.Minute, func(context.Context) error {
		if st := latestReleaseStatus(t, env, ns, "stuck"); st != "pending-install" {
			return fmt.Errorf("stuck's latest revision is %q, want pending-install", st)
		}
		return nil
	})
	if err := env.Client.Create(ctx, newCR(hookAppGVK, ns, "plain", map[string]any{"hook": false})); err != nil {
		t.Fatal(err)
	}

	want := "timed out after 20s waiting for hook Job " + ns + "/stuck-post-install"
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, hookAppGVK, ns, "stuck")
		if err != nil {
			return err
		}
		for _, c := range st.Conditions {
			if strings.Contains(c.Message, want) {
				return nil
			}
		}
		return fmt.Errorf("no condition says %q: %+v", want, st.Conditions)
	})
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		for _, m := range eventMessages(ctx, t, env, ns, "stuck") {
			if strings.Contains(m, want) {
				return nil
			}
		}
		return fmt.Errorf("no Event says %q: %q", want, eventMessages(ctx, t, env, ns, "stuck"))
	})
	testenv.Eventually(t, 90*time.Second, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, hookAppGVK, ns, "plain")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() {
			return fmt.Errorf("plain not Ready: %+v", st.Conditions)
		}
		return nil
	})
}
