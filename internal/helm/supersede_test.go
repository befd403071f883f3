package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// gatedWrites is a memory driver whose superseded marks wait at a gate
// (closed: they go at once) and fail with failSuperseded.
type gatedWrites struct {
	*driver.Memory
	gate           chan struct{}
	failSuperseded error
}

func (g *gatedWrites) Update(key string, r *release.Release) error {
	if r.Info.Status == release.StatusSuperseded {
		<-g.gate
		if g.failSuperseded != nil {
			return g.failSuperseded
		}
	}
	return g.Memory.Update(key, stored(r))
}

func rev(v int, s release.Status) *release.Release {
	return &release.Release{Name: "web", Version: v, Namespace: "ns", Info: &release.Info{Status: s}}
}

func key(v int) string { return fmt.Sprintf("sh.helm.release.v1.web.v%d", v) }

// The superseded mark is in flight while the deployed mark is sent; the
// deployed mark returns only once both are answered, and every other call
// waits for the superseded mark first.
func TestSupersededMarkGoesAlongside(t *testing.T) {
	for _, c := range []struct {
		name string
		next func(d *supersedeDriver) error // the call after the superseded mark
		// alongside: next stores revision 2 deployed while the superseded
		// mark is held.
		alongside bool
	}{
		{"the deployed mark goes with it", func(d *supersedeDriver) error { return d.Update(key(2), rev(2, release.StatusDeployed)) }, true},
		{"a read waits for it", func(d *supersedeDriver) error {
			r, err := d.Get(key(1))
			if err == nil && r.Info.Status != release.StatusSuperseded {
				err = fmt.Errorf("read revision 1 as %s, after marking it superseded", r.Info.Status)
			}
			return err
		}, false},
		{"a query waits for it", func(d *supersedeDriver) error {
			rs, err := d.Query(map[string]string{"name": "web", "owner": "helm", "status": "superseded"})
			if err == nil && len(rs) != 1 {
				err = fmt.Errorf("query found %d superseded revisions", len(rs))
			}
			return err
		}, false},
		{"flush waits for it", func(d *supersedeDriver) error { return d.flush() }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := &gatedWrites{Memory: driver.NewMemory(), gate: make(chan struct{})}
			for _, r := range []*release.Release{rev(1, release.StatusDeployed), rev(2, release.StatusPendingUpgrade)} {
				if err := mem.Create(key(r.Version), r); err != nil {
					t.Fatal(err)
				}
			}
			d := newSupersedeDriver(mem, func(string, ...any) {})
			if err := d.Update(key(1), rev(1, release.StatusSuperseded)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- c.next(d) }()
			select {
			case err := <-done:
				t.Fatalf("returned (%v) before the superseded mark was answered", err)
			case <-time.After(100 * time.Millisecond):
			}
			if c.alongside {
				for i := 0; ; i++ { // bounded: 10 s
					if got, _ := mem.Memory.Get(key(2)); got.Info.Status == release.StatusDeployed {
						break
					}
					if i == 1000 {
						t.Fatal("revision 2 was not marked deployed while revision 1's superseded mark was in flight")
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			close(mem.gate)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if got, _ := mem.Memory.Get(key(1)); got.Info.Status != release.StatusSuperseded {
				t.Errorf("revision 1 stored as %s", got.Info.Status)
			}
		})
	}
}

// A superseded mark that fails is logged, as Helm does, and the upgrade
// stands: its revision is deployed (Helm's next actions take the latest
// deployed revision as the release's).
func TestFailedSupersededMarkIsLogged(t *testing.T) {
	gate := make(chan struct{})
	close(gate)
	mem := &gatedWrites{Memory: driver.NewMemory(), gate: gate, failSuperseded: errors.New("the API server said no")}
	var mu sync.Mutex
	var logged []string
	d := newSupersedeDriver(newOneWriteDriver(mem), func(format string, v ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, v...))
	})
	hc := NewOffline(storage.Init(d), &kubefake.PrintingKubeClient{Out: io.Discard})
	ctx := context.Background()
	req := Request{Name: "web", Namespace: "ns", Chart: appChart(false), Values: map[string]any{"v": "1"}}
	if _, err := hc.Install(ctx, req); err != nil {
		t.Fatal(err)
	}
	req.Values = map[string]any{"v": "2"}
	if _, err := hc.Upgrade(ctx, req); err != nil {
		t.Fatalf("the upgrade failed on its superseded mark: %v", err)
	}
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	if got, _ := mem.Memory.Get(key(2)); got.Info.Status != release.StatusDeployed {
		t.Errorf("revision 2 stored as %s, want deployed", got.Info.Status)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) != 1 || logged[0] != "warning: Failed to update release web: the API server said no" {
		t.Errorf("logged %q", logged)
	}
}
