package release

import (
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// inherit makes the machine's release look as a predecessor operator left
// it: revision 1 installed with config (the spec's values as it stored
// them), none of chartkeeper's labels (a label of the predecessor's user
// kept), its Secret owned by owner (none: a person's helm install).
func inherit(config map[string]any, owner types.UID) func(m *machine) {
	return func(m *machine) {
		m.run(5)
		rel, err := m.store.Last("app")
		if err != nil {
			m.t.Fatal(err)
		}
		rel.Labels = map[string]string{"team": "ops"}
		rel.Config = config
		if err := m.store.Update(rel); err != nil {
			m.t.Fatal(err)
		}
		if owner != "" {
			m.sc.owners = map[int][]types.UID{rel.Version: {"uid-other", owner}}
		}
		m.st = api.Status{}
	}
}

func TestTakeOver(t *testing.T) {
	spec := map[string]any{"data": "v1"}
	runActionCases(t, []actionCase{
		{name: "a predecessor's release is taken over in place", setup: inherit(spec, "uid-app"), want: "Inherited/TakeOver",
			events: []string{"Normal TakenOver"}, conds: map[string]string{"Released": "True TakenOver"}, lastAction: "TakeOver"},
		{name: "a failed takeover is not counted", setup: inherit(spec, "uid-app"),
			fail: map[string]error{"TakeOver": errors.New("secrets is forbidden")}, want: "Inherited/TakeOver!",
			events: []string{"Warning TakeOverFailed"}, conds: map[string]string{"Released": "False TakeOverFailed"}, lastAction: "-"},
		{name: "a release whose Secret names no owner is refused", setup: inherit(spec, ""), want: "Stalled",
			events: []string{}, conds: map[string]string{"Ready": "False ReleaseOwnedByAnother"}, lastAction: "-"},
		{name: "an unlabelled revision on top of chartkeeper's is refused, whoever owns its Secret", setup: func(m *machine) {
			inherit(spec, "uid-app")(m)
			m.setSpec("v2")
			m.run(5) // revision 2, chartkeeper's
			rel, err := m.store.Last("app")
			if err != nil {
				m.t.Fatal(err)
			}
			rel.Labels, rel.Version = map[string]string{}, 3
			if err := m.store.Create(rel); err != nil {
				m.t.Fatal(err)
			}
			m.sc.owners = map[int][]types.UID{3: {"uid-app"}}
		}, want: "Stalled", events: []string{}, conds: map[string]string{"Ready": "False ReleaseOwnedByAnother"}, lastAction: "Upgrade"},
		{name: "a release owned by another resource is refused", setup: inherit(spec, "uid-someone-else"), want: "Stalled",
			events: []string{}, conds: map[string]string{"Ready": "False ReleaseOwnedByAnother"}, lastAction: "-"},
	})
}

// Taken over, a release whose stored chart and values are the desired
// ones is in sync: no revision is made, its labels (the predecessor's
// user's kept) say it is chartkeeper's, and the next spec change is an
// ordinary upgrade. Values stored merged over the chart's defaults (as
// helm-operator-plugins stores them) are the desired ones too.
func TestTakeOverMakesNoRevision(t *testing.T) {
	for name, stored := range map[string]map[string]any{
		"as the spec":                     {"data": "v1"},
		"merged over the chart's default": coalescedSpec(t, map[string]any{"data": "v1", "extra": "x"}),
	} {
		t.Run(name, func(t *testing.T) {
			m := newMachine(t, nil)
			if _, ok := stored["extra"]; ok {
				m.setValues(map[string]any{"data": "v1", "extra": "x"})
			}
			inherit(stored, "uid-app")(m)
			expectTrace(t, m.run(5), "Inherited/TakeOver", "InSync")
			rel, err := m.store.Last("app")
			if err != nil {
				t.Fatal(err)
			}
			if rel.Version != 1 {
				t.Fatalf("revision %d after the takeover: want 1, none made", rel.Version)
			}
			for k, want := range map[string]string{api.LabelManaged: "true", api.LabelOwnerUID: "uid-app", api.LabelDigest: m.st.Release.Digest, "team": "ops"} {
				if rel.Labels[k] != want || want == "" {
					t.Errorf("label %s = %q, want %q (labels %v)", k, rel.Labels[k], want, rel.Labels)
				}
			}
			if len(m.st.History) == 0 || m.st.History[0].Action != string(ActionTakeOver) || m.st.History[0].Revision != 1 {
				t.Errorf("status.history %+v: want the takeover of revision 1 first", m.st.History)
			}
			m.setSpec("v2")
			expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
			if rel, _ := m.store.Last("app"); rel.Version != 2 {
				t.Errorf("revision %d after a spec change: want 2", rel.Version)
			}
		})
	}
}

// When the spec changed during the switch, the release is taken over
// first (without the desired digest), then upgraded.
func TestTakeOverThenUpgradeWhenTheSpecChanged(t *testing.T) {
	m := newMachine(t, nil)
	inherit(map[string]any{"data": "v0"}, "uid-app")(m)
	expectTrace(t, m.run(5), "Inherited/TakeOver", "OutOfSync/Upgrade", "InSync")
	rel, err := m.store.Last("app")
	if err != nil {
		t.Fatal(err)
	}
	if rel.Version != 2 || rel.Config["data"] != "v1" {
		t.Fatalf("revision %d with values %v: want 2 with the spec's", rel.Version, rel.Config)
	}
}

// Deleting a resource whose predecessor's release was never taken over
// uninstalls it.
func TestPredecessorsReleaseIsUninstalledOnDeletion(t *testing.T) {
	m := newMachine(t, nil)
	inherit(map[string]any{"data": "v1"}, "uid-app")(m)
	m.obj.SetFinalizers([]string{api.FinalizerHelmOperatorPlugins})
	now := metav1.NewTime(m.clock.Now())
	m.obj.SetDeletionTimestamp(&now)
	m.run(5)
	if _, err := m.store.Last("app"); err == nil {
		t.Fatal("the predecessor's release outlived its resource")
	}
}

// coalescedSpec is spec merged over the test chart's defaults.
func coalescedSpec(t *testing.T, spec map[string]any) map[string]any {
	t.Helper()
	out, err := chartutil.CoalesceValues(testChart(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
