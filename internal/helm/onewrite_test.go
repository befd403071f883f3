package helm

import (
	"context"
	"io"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// writeLog is a memory driver that records every write, with the status written.
type writeLog struct {
	*driver.Memory
	writes []string
}

func (w *writeLog) Create(key string, r *release.Release) error {
	w.writes = append(w.writes, "create "+key+" "+string(r.Info.Status))
	return w.Memory.Create(key, r)
}

func (w *writeLog) Update(key string, r *release.Release) error {
	w.writes = append(w.writes, "update "+key+" "+string(r.Info.Status))
	return w.Memory.Update(key, r)
}

func (w *writeLog) Delete(key string) (*release.Release, error) {
	w.writes = append(w.writes, "delete "+key)
	return w.Memory.Delete(key)
}

func appChart(withHook bool) *chart.Chart {
	ch := &chart.Chart{
		Metadata:  &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  v: {{ .Values.v | quote }}\n")}},
	}
	if withHook {
		ch.Templates = append(ch.Templates, &chart.File{Name: "templates/hook.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hook\n  annotations:\n    helm.sh/hook: pre-install,pre-upgrade,pre-rollback,pre-delete\n")})
	}
	return ch
}

// An action that applies objects writes its revision as Helm does, in
// progress first; an uninstall without hooks writes nothing before it
// deletes the revisions.
func TestWritesPerRevision(t *testing.T) {
	const v1, v2, v3 = "sh.helm.release.v1.web.v1", "sh.helm.release.v1.web.v2", "sh.helm.release.v1.web.v3"
	for _, c := range []struct {
		name  string
		hooks bool
		want  []string
	}{
		{"no hooks", false, []string{
			"create " + v1 + " pending-install", "update " + v1 + " deployed",
			"create " + v2 + " pending-upgrade", "update " + v1 + " superseded", "update " + v2 + " deployed",
			"create " + v3 + " pending-rollback", "update " + v2 + " superseded", "update " + v3 + " deployed",
			"delete " + v1, "delete " + v2, "delete " + v3,
		}},
		// Helm's own writes: the pending revision, again with its hooks' runs, then the outcome.
		{"hooks", true, []string{
			"create " + v1 + " pending-install", "update " + v1 + " pending-install", "update " + v1 + " deployed",
			"create " + v2 + " pending-upgrade", "update " + v2 + " pending-upgrade", "update " + v1 + " superseded", "update " + v2 + " deployed",
			"create " + v3 + " pending-rollback", "update " + v3 + " pending-rollback", "update " + v2 + " superseded", "update " + v3 + " deployed",
			"update " + v3 + " uninstalling", "update " + v3 + " uninstalling", "delete " + v1, "delete " + v2, "delete " + v3,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := &writeLog{Memory: driver.NewMemory()}
			st := storage.Init(newOneWriteDriver(log))
			hc := NewOffline(st, &kubefake.PrintingKubeClient{Out: io.Discard})
			ctx := context.Background()
			req := Request{Name: "web", Namespace: "ns", Chart: appChart(c.hooks), Values: map[string]any{"v": "1"}}
			if _, err := hc.Install(ctx, req); err != nil {
				t.Fatal(err)
			}
			req.Values = map[string]any{"v": "2"}
			if _, err := hc.Upgrade(ctx, req); err != nil {
				t.Fatal(err)
			}
			if err := hc.Rollback(ctx, "web", "ns", 1, 0, Guard{}); err != nil {
				t.Fatal(err)
			}
			revs, err := hc.StoredRevisions(ctx, "web", "ns")
			if err != nil || len(revs) != 3 || revs[2].Status != release.StatusDeployed {
				t.Fatalf("after rollback: %+v %v", revs, err)
			}
			if err := hc.Uninstall(ctx, "web", "ns", "bye", Guard{}); err != nil {
				t.Fatal(err)
			}
			if len(log.writes) != len(c.want) {
				t.Fatalf("writes:\n%v\nwant:\n%v", log.writes, c.want)
			}
			for i := range c.want {
				if log.writes[i] != c.want[i] {
					t.Errorf("write %d: %q, want %q", i, log.writes[i], c.want[i])
				}
			}
		})
	}
}

// A revision an action left held (it never recorded an outcome) is written.
func TestFlushWritesWhatWasHeld(t *testing.T) {
	log := &writeLog{Memory: driver.NewMemory()}
	d := newOneWriteDriver(log)
	rel := &release.Release{Name: "web", Version: 1, Info: &release.Info{Status: release.StatusDeployed}}
	if err := d.Create("sh.helm.release.v1.web.v1", rel); err != nil {
		t.Fatal(err)
	}
	log.writes = nil
	rel = &release.Release{Name: "web", Version: 1, Info: &release.Info{Status: release.StatusUninstalling}}
	if err := d.Update("sh.helm.release.v1.web.v1", rel); err != nil {
		t.Fatal(err)
	}
	if got, err := d.Query(map[string]string{"name": "web", "owner": "helm"}); err != nil || len(got) != 1 {
		t.Fatalf("held revision not read back: %v %v", got, err)
	}
	if len(log.writes) != 0 {
		t.Fatalf("written before the outcome: %v", log.writes)
	}
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	if len(log.writes) != 1 || log.writes[0] != "update sh.helm.release.v1.web.v1 uninstalling" {
		t.Errorf("flush wrote %v", log.writes)
	}
}
