package release

import (
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

func TestProve(t *testing.T) {
	ch := testChart()
	other := testChart()
	other.Metadata.Version = "1.0.1"
	edited := testChart()
	edited.Templates = append([]*chart.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap")}}, edited.Templates[1:]...)
	deployed := helmtime.Time{Time: time.Date(2026, 11, 23, 14, 16, 30, 0, time.UTC)}
	stored := func(c *chart.Chart, cfg map[string]any) *helmrelease.Release {
		return &helmrelease.Release{Version: 2, Chart: c, Config: cfg,
			Info:   &helmrelease.Info{Description: "Upgrade complete", LastDeployed: deployed},
			Labels: map[string]string{api.LabelDigest: "d", api.LabelManaged: "true", "team": "ops"}}
	}
	for _, tc := range []struct {
		name    string
		rel     *helmrelease.Release
		desired map[string]any
		differs string // "" : verified
	}{
		{"same chart and values", stored(ch, map[string]any{"data": "v1"}), map[string]any{"data": "v1"}, ""},
		{"numbers as Helm stores them (JSON)", stored(ch, map[string]any{"replicas": float64(3), "big": float64(1 << 60)}),
			map[string]any{"replicas": int64(3), "big": int64(1 << 60)}, ""},
		{"empty values are not stored", stored(ch, nil), map[string]any{}, ""},
		{"a hand --set", stored(ch, map[string]any{"data": "hand"}), map[string]any{"data": "v1"}, "values"},
		{"a key added by hand", stored(ch, map[string]any{"data": "v1", "x": "y"}), map[string]any{"data": "v1"}, "values"},
		{"values Helm reused from before", stored(ch, map[string]any{"data": "v2"}), map[string]any{}, "values"},
		{"the chart's defaults merged in (as helm-operator-plugins stores values)", stored(ch, map[string]any{"data": "v1", "x": "y"}), map[string]any{"x": "y"}, ""},
		{"the chart's defaults merged in, and a key added by hand", stored(ch, map[string]any{"data": "v1", "x": "y", "z": "w"}), map[string]any{"x": "y"}, "values"},
		{"another chart version", stored(other, map[string]any{"data": "v1"}), map[string]any{"data": "v1"}, "chart app-1.0.1"},
		{"edited templates", stored(edited, map[string]any{"data": "v1"}), map[string]any{"data": "v1"}, "chart templates"},
		{"no chart", stored(nil, map[string]any{"data": "hand"}), map[string]any{"data": "v1"}, "no chart stored, values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := prove(tc.rel, ch, tc.desired)
			if p.verified != (tc.differs == "") || p.differs != tc.differs {
				t.Fatalf("verified %v, differs %q; want differs %q", p.verified, p.differs, tc.differs)
			}
			if p.verified {
				return
			}
			msg := outOfBandMessage(tc.rel.Version, p)
			for _, want := range []string{"revision 2 was made outside chartkeeper", `"Upgrade complete"`, "2026-11-23T14:16:30Z", "labels team=ops", "differs: " + tc.differs} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, api.LabelDigest) {
				t.Errorf("message %q lists chartkeeper's own labels", msg)
			}
		})
	}
}

// handUpgrade stores what a person's `helm upgrade --reuse-values --set
// data=<data>` stores: a new revision with the labels of the last one
// (the digest label among them), other values, Helm's own description.
func (m *machine) handUpgrade(data string) {
	m.t.Helper()
	last, err := m.store.Last("app")
	if err != nil {
		m.t.Fatal(err)
	}
	cfg := map[string]any{}
	for k, v := range last.Config {
		cfg[k] = v
	}
	cfg["data"] = data
	labels := map[string]string{}
	for k, v := range last.Labels {
		labels[k] = v
	}
	next := &helmrelease.Release{Name: last.Name, Namespace: last.Namespace, Version: last.Version + 1, Chart: last.Chart,
		Config: cfg, Manifest: strings.ReplaceAll(last.Manifest, `"`+last.Config["data"].(string)+`"`, `"`+data+`"`),
		Labels: labels, Info: &helmrelease.Info{Status: helmrelease.StatusDeployed, Description: "Upgrade complete",
			FirstDeployed: last.Info.FirstDeployed, LastDeployed: helmtime.Time{Time: m.clock.Now()}}}
	last.Info.Status = helmrelease.StatusSuperseded
	if err := m.store.Update(last); err != nil {
		m.t.Fatal(err)
	}
	if err := m.store.Create(next); err != nil {
		m.t.Fatal(err)
	}
}

// A hand upgrade that inherits the digest label is seen, named in an
// Event and upgraded back; chartkeeper's own revisions are trusted, by the
// process that made them and (after one decode) by a restarted one.
func TestMachineHandUpgradeIsUpgradedBack(t *testing.T) {
	m := newMachine(t, nil)
	expectTrace(t, m.run(5), "Absent/Install", "InSync")
	m.handUpgrade("hand")
	m.events.take()
	m.helm.gets = 0
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
	if m.helm.gets != 1 { // revision 2 decoded once; revision 3, made here, not at all
		t.Errorf("%d revisions decoded, want 1", m.helm.gets)
	}
	if evs := strings.Join(m.events.take(), " "); evs != "Warning ChangedOutsideChartkeeper Normal UpgradeSucceeded" {
		t.Errorf("events %s", evs)
	}
	rel, err := m.store.Last("app")
	if err != nil || rel.Version != 3 || rel.Config["data"] != "v1" {
		t.Fatalf("latest %+v (%v)", rel, err)
	}
	if got := strings.Join(m.history(), " "); got != "1:superseded 2:superseded 3:deployed" {
		t.Errorf("history %s", got)
	}
	// A restarted operator (nothing remembered of the release) decodes revision 3 once and trusts it.
	m.restartMemory()
	m.helm.gets = 0
	expectTrace(t, m.run(3), "InSync")
	expectTrace(t, m.run(3), "InSync")
	if c := m.cond(api.ConditionReady); c.Status != "True" {
		t.Errorf("Ready %+v", c)
	}
	if m.helm.gets != 1 { // once per revision per process, not per step
		t.Errorf("%d revisions decoded in two steps, want 1", m.helm.gets)
	}
}

// Empty values replace the previous ones (Helm would copy them): the
// upgrade's revision is then verified, and nothing loops.
func TestMachineEmptyValuesDoNotLoop(t *testing.T) {
	m := newMachine(t, nil)
	expectTrace(t, m.run(5), "Absent/Install", "InSync")
	m.setValues(map[string]any{})
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
	m.restartMemory()
	expectTrace(t, m.run(3), "InSync")
	if rel, err := m.store.Last("app"); err != nil || len(rel.Config) != 0 {
		t.Errorf("latest values %v (%v)", rel.Config, err)
	}
}

// restartMemory drops what the engine remembers of the release's revisions
// (verdicts and parsed manifests), as a restarted operator has none.
func (m *machine) restartMemory() {
	m.engine.proofs.forget("ns/app")
	m.engine.manifests.forget("ns/app")
}
