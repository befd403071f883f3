package release

import (
	"context"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	helmrelease "helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// other is a resource of another kind, with another UID, whose release
// name is the machine's resource's.
func other(m *machine) *unstructured.Unstructured {
	o := m.obj.DeepCopy()
	o.SetKind("HookApp")
	o.SetUID("uid-other")
	return o
}

// stepAs runs one Step of obj (not the machine's resource) on the
// machine's engine and storage.
func stepAs(m *machine, obj *unstructured.Unstructured, st *api.Status) Result {
	m.t.Helper()
	res, err := m.engine.Step(context.Background(), m.target, obj, st)
	if err != nil {
		m.t.Fatalf("step: %v", err)
	}
	return res
}

// setLabels rewrites the stored labels of the latest revision.
func setLabels(m *machine, edit func(map[string]string) map[string]string) {
	m.t.Helper()
	rel, err := m.store.Last("app")
	if err != nil {
		m.t.Fatal(err)
	}
	rel.Labels = edit(rel.Labels)
	if err := m.store.Update(rel); err != nil {
		m.t.Fatal(err)
	}
}

func readyReason(st api.Status) metav1.Condition {
	for _, c := range st.Conditions {
		if c.Type == api.ConditionReady {
			return c
		}
	}
	return metav1.Condition{}
}

func TestOwnership(t *testing.T) {
	tests := []struct {
		name   string
		policy func(*watches.Policy)
		// setup brings the storage to the case; then the resource acts.
		setup func(m *machine)
		// asOther: the step is the other resource's.
		asOther bool
		want    string // "State/Action"
		reason  api.Reason
		mention string // in Ready's message
		history string
	}{
		{name: "an install records the owner's UID", setup: func(m *machine) {},
			want: "Absent/Install", history: "1:deployed"},
		{name: "another resource's release is refused, naming it",
			setup: func(m *machine) { m.run(3) }, asOther: true,
			want: "Stalled", reason: api.ReasonReleaseOwnedByAnother, mention: "belongs to App ns/app", history: "1:deployed"},
		{name: "a rolled back revision keeps its owner",
			setup: func(m *machine) {
				m.run(3)
				m.setSpec("fail-me")
				m.run(3) // upgrade fails, rolled back to 1
			}, asOther: true,
			want: "Stalled", reason: api.ReasonReleaseOwnedByAnother, mention: "App ns/app", history: "1:superseded 2:failed 3:deployed"},
		{name: "an older chartkeeper's release of the same resource is adopted without an upgrade",
			setup: func(m *machine) {
				m.run(3)
				setLabels(m, func(l map[string]string) map[string]string { delete(l, api.LabelOwnerUID); return l })
			},
			want: "InSync", history: "1:deployed"},
		{name: "an older chartkeeper's release of another kind is refused",
			setup: func(m *machine) {
				m.run(3)
				setLabels(m, func(l map[string]string) map[string]string { delete(l, api.LabelOwnerUID); return l })
			}, asOther: true,
			want: "Stalled", reason: api.ReasonReleaseOwnedByAnother, mention: "App ns/app", history: "1:deployed"},
		{name: "a release made by hand is not taken over",
			setup: func(m *machine) { handRelease(m) },
			want:  "Stalled", reason: api.ReasonReleaseOwnedByAnother, mention: "not made by chartkeeper", history: "1:deployed"},
		{name: "a release made by hand is adopted when the watch says so",
			policy: func(p *watches.Policy) { p.Adopt = true },
			setup:  func(m *machine) { handRelease(m) },
			want:   "OutOfSync/Upgrade", history: "1:superseded 2:deployed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMachine(t, tt.policy)
			tt.setup(m)
			obj, st := m.obj, &m.st
			if tt.asOther {
				obj, st = other(m), &api.Status{}
			}
			res := stepAs(m, obj, st)
			m.checkReasons()
			got := string(res.Decision.State)
			if res.Ran != ActionNone {
				got += "/" + string(res.Ran)
			}
			if got != tt.want {
				t.Errorf("step %s, want %s (%s)", got, tt.want, res.Decision.Message)
			}
			ready := readyReason(*st)
			if tt.reason != "" && (ready.Reason != string(tt.reason) || !strings.Contains(ready.Message, tt.mention)) {
				t.Errorf("Ready %s %q, want %s mentioning %q", ready.Reason, ready.Message, tt.reason, tt.mention)
			}
			if tt.reason != "" && res.Requeue == 0 {
				t.Error("a refused resource is looked at again")
			}
			if h := strings.Join(m.history(), " "); h != tt.history {
				t.Errorf("history %s, want %s", h, tt.history)
			}
			if rel, err := m.store.Last("app"); err == nil && rel.Info.Status == helmrelease.StatusDeployed && !tt.asOther && tt.reason == "" && res.Ran != ActionNone {
				if rel.Labels[api.LabelOwnerUID] != "uid-app" {
					t.Errorf("revision %d labels %v: no owner UID", rel.Version, rel.Labels)
				}
			}
			if !tt.asOther {
				return
			}
			// Deleting the refused resource leaves the release alone.
			now := metav1.NewTime(t0.Add(time.Hour))
			obj.SetDeletionTimestamp(&now)
			if res := stepAs(m, obj, st); !res.Finished || res.Ran != ActionNone {
				t.Errorf("deleting the refused resource: %+v", res)
			}
			if h := strings.Join(m.history(), " "); h != tt.history {
				t.Errorf("history after deleting the refused resource %s, want %s", h, tt.history)
			}
		})
	}
}

// handRelease stores a release as a person's helm install would: no
// chartkeeper labels.
func handRelease(m *machine) {
	m.t.Helper()
	rel := &helmrelease.Release{Name: "app", Namespace: "ns", Version: 1,
		Chart:  &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}},
		Config: map[string]any{}, Manifest: "",
		Info: &helmrelease.Info{Status: helmrelease.StatusDeployed, Description: "Install complete"}}
	if err := m.store.Create(rel); err != nil {
		m.t.Fatal(err)
	}
}

func TestParseDescription(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want claimant
		ok   bool
	}{
		{"chartkeeper: App team/db generation 3", claimant{namespace: "team", name: "db"}, true},
		{"chartkeeper: Cluster /main generation 1", claimant{namespace: "", name: "main"}, true},
		{"Rollback to 1", claimant{}, false},
		{"Install complete", claimant{}, false},
		{"chartkeeper: App db generation 1", claimant{}, false},
	} {
		got, ok := parseDescription(tc.in)
		if ok != tc.ok || got.namespace != tc.want.namespace || got.name != tc.want.name {
			t.Errorf("parseDescription(%q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
