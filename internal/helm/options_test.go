package helm

import (
	"context"
	"io"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// Guard.DisableHooks reaches Helm: the chart's hooks do not run (helm
// --no-hooks) on install, upgrade and uninstall; without it they do.
func TestDisableHooksReachesHelm(t *testing.T) {
	ch := &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"},
		Templates: []*chart.File{
			{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n")},
			{Name: "templates/hook.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations:\n" +
				"    helm.sh/hook: pre-install,pre-upgrade,pre-delete\n")},
		},
	}
	for _, disable := range []bool{false, true} {
		st := storage.Init(driver.NewMemory())
		c := NewOffline(st, &kubefake.PrintingKubeClient{Out: io.Discard})
		ctx := context.Background()
		req := Request{Name: "web", Namespace: "ns", Chart: ch, Guard: Guard{DisableHooks: disable}}
		rel, err := c.Install(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if ran := !rel.Hooks[0].LastRun.StartedAt.IsZero(); ran == disable {
			t.Errorf("DisableHooks %v: install hook ran = %v", disable, ran)
		}
		req.Force = true
		if rel, err = c.Upgrade(ctx, req); err != nil {
			t.Fatal(err)
		}
		if ran := !rel.Hooks[0].LastRun.StartedAt.IsZero(); ran == disable {
			t.Errorf("DisableHooks %v: upgrade hook ran = %v", disable, ran)
		}
		if err := c.Uninstall(ctx, "web", "ns", "bye", Guard{DisableHooks: disable}); err != nil {
			t.Fatal(err)
		}
	}
}
