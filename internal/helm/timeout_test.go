package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"
)

func TestExplainTimeout(t *testing.T) {
	t0 := helmtime.Unix(1_700_000_000, 0)
	hook := func(name string, phase release.HookPhase, started helmtime.Time, ev release.HookEvent) *release.Hook {
		return &release.Hook{Kind: "Job", Name: name, Events: []release.HookEvent{ev}, LastRun: release.HookExecution{StartedAt: started, Phase: phase}}
	}
	waitErr := errors.New("failed post-install: timed out waiting for the condition")
	tests := []struct {
		name    string
		err     error
		timeout time.Duration
		hooks   []*release.Hook
		want    string // "" : err returned as it is
	}{
		{"names the hook it waited for", waitErr, 20 * time.Second,
			[]*release.Hook{hook("db-init", release.HookPhaseSucceeded, t0, release.HookPreInstall), hook("web-post", release.HookPhaseFailed, t0.Add(time.Second), release.HookPostInstall)},
			"timed out after 20s waiting for hook Job ns/web-post (post-install): failed post-install: timed out waiting for the condition"},
		{"no hook ran: says how long", fmt.Errorf("upgrade: %w", context.DeadlineExceeded), time.Minute, nil,
			"timed out after 1m0s: upgrade: context deadline exceeded"},
		{"another error is left alone", errors.New("admission webhook denied the request"), time.Minute, nil, ""},
		{"no timeout set: left alone", waitErr, 0, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storage.Init(driver.NewMemory())
			if err := st.Create(&release.Release{Name: "web", Namespace: "ns", Version: 1, Info: &release.Info{Status: release.StatusFailed}, Hooks: tt.hooks}); err != nil {
				t.Fatal(err)
			}
			c := NewOffline(st, nil)
			got := c.explainTimeout(context.Background(), tt.err, tt.timeout, "web", "ns")
			if tt.want == "" {
				if got != tt.err {
					t.Errorf("got %v, want the error unchanged", got)
				}
				return
			}
			var te *TimeoutError
			if !errors.As(got, &te) || got.Error() != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			if errors.Is(got, context.DeadlineExceeded) || !strings.HasPrefix(got.Error(), "timed out") || !IsTimeout(got) {
				t.Errorf("%v: a timeout is a failure, not a transient deadline", got)
			}
		})
	}
}
