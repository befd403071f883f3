package release

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestPredecessorConditions(t *testing.T) {
	cond := func(typ string, s metav1.ConditionStatus, r api.Reason, msg string) *metav1.Condition {
		return &metav1.Condition{Type: typ, Status: s, Reason: string(r), Message: msg}
	}
	ready := cond(api.ConditionReady, metav1.ConditionTrue, api.ReasonSucceeded, "")
	tests := []struct {
		name string
		in   compatIn
		// want: "Type Status Reason" of Deployed, ReleaseFailed, Irreconcilable.
		want []string
	}{
		{name: "installed, ready",
			in:   compatIn{released: cond(api.ConditionReleased, "True", api.ReasonInstallSucceeded, ""), ready: ready, revision: 1, lastAction: ActionInstall},
			want: []string{"Deployed True InstallSuccessful", "ReleaseFailed False InstallSucceeded", "Irreconcilable False Succeeded"}},
		{name: "upgraded, objects not ready yet: deployed all the same",
			in: compatIn{released: cond(api.ConditionReleased, "True", api.ReasonUpgradeSucceeded, ""),
				ready: cond(api.ConditionReady, "False", api.ReasonProgressing, "not ready"), revision: 2, lastAction: ActionUpgrade},
			want: []string{"Deployed True UpgradeSuccessful", "ReleaseFailed False UpgradeSucceeded", "Irreconcilable False Progressing"}},
		{name: "no release yet",
			in:   compatIn{released: cond(api.ConditionReleased, "False", api.ReasonNotReleased, ""), ready: cond(api.ConditionReady, "False", api.ReasonProgressing, "")},
			want: []string{"Deployed False NotReleased", "ReleaseFailed False NotReleased", "Irreconcilable False Progressing"}},
		{name: "an upgrade failed and was rolled back",
			in: compatIn{released: cond(api.ConditionReleased, "False", api.ReasonUpgradeFailed, "Upgrade failed: refused"),
				ready: cond(api.ConditionReady, "False", api.ReasonBackoff, "next attempt in 1s"), revision: 3, lastAction: ActionUpgrade},
			want: []string{"Deployed False UpgradeFailed", "ReleaseFailed True UpgradeError", "Irreconcilable True ReconcileError"}},
		{name: "an install failed",
			in:   compatIn{released: cond(api.ConditionReleased, "False", api.ReasonInstallFailed, "Install failed"), ready: cond(api.ConditionReady, "False", api.ReasonBackoff, ""), revision: 1},
			want: []string{"Deployed False InstallFailed", "ReleaseFailed True InstallError", "Irreconcilable True ReconcileError"}},
		{name: "the chart refuses a first install's values",
			in: compatIn{released: cond(api.ConditionReleased, "False", api.ReasonChartError, "Install failed"),
				ready: cond(api.ConditionReady, "False", api.ReasonChartError, ""), stalled: true, lastAction: ActionInstall},
			want: []string{"Deployed False ChartError", "ReleaseFailed True InstallError", "Irreconcilable True ReconcileError"}},
		{name: "retries exhausted after upgrades",
			in: compatIn{released: cond(api.ConditionReleased, "False", api.ReasonRetriesExhausted, ""),
				ready: cond(api.ConditionReady, "False", api.ReasonRetriesExhausted, ""), stalled: true, revision: 5, lastAction: ActionUpgrade},
			want: []string{"Deployed False RetriesExhausted", "ReleaseFailed True UpgradeError", "Irreconcilable True ReconcileError"}},
		{name: "an uninstall failed",
			in: compatIn{released: cond(api.ConditionReleased, "False", api.ReasonUninstallFailed, ""),
				ready: cond(api.ConditionReady, "False", api.ReasonBackoff, ""), revision: 2, lastAction: ActionUninstall},
			want: []string{"Deployed False UninstallFailed", "ReleaseFailed True UninstallError", "Irreconcilable True ReconcileError"}},
		{name: "uninstalled",
			in:   compatIn{released: cond(api.ConditionReleased, "False", api.ReasonUninstallSucceeded, ""), ready: cond(api.ConditionReady, "False", api.ReasonUninstallSucceeded, "")},
			want: []string{"Deployed False UninstallSuccessful", "ReleaseFailed False UninstallSucceeded", "Irreconcilable False UninstallSucceeded"}},
		{name: "another resource's release: not failed, irreconcilable",
			in:   compatIn{ready: cond(api.ConditionReady, "False", api.ReasonReleaseOwnedByAnother, "release ns/app belongs to App ns/other"), stalled: true},
			want: []string{"Deployed False ReleaseOwnedByAnother", "ReleaseFailed False ReleaseOwnedByAnother", "Irreconcilable True ReconcileError"}},
		{name: "a Go hook failed",
			in: compatIn{released: cond(api.ConditionReleased, "True", api.ReasonSucceeded, ""),
				ready: cond(api.ConditionReady, "False", api.ReasonHookFailed, "hook x failed"), revision: 2},
			want: []string{"Deployed True UpgradeSuccessful", "ReleaseFailed False Succeeded", "Irreconcilable True ReconcileError"}},
		{name: "suspended",
			in: compatIn{released: cond(api.ConditionReleased, "True", api.ReasonSucceeded, ""),
				ready: cond(api.ConditionReady, "False", api.ReasonSuspended, ""), revision: 1},
			want: []string{"Deployed True InstallSuccessful", "ReleaseFailed False Succeeded", "Irreconcilable False Suspended"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := predecessorConditions(tt.in)
			var got []string
			for _, c := range out {
				if c.typ == api.ConditionInitialized {
					if c.status != metav1.ConditionTrue {
						t.Errorf("Initialized %s", c.status)
					}
					continue
				}
				if !api.IsReason(string(c.reason)) {
					t.Errorf("%s: undeclared reason %q", c.typ, c.reason)
				}
				got = append(got, c.typ+" "+string(c.status)+" "+string(c.reason))
			}
			if strings.Join(got, ", ") != strings.Join(tt.want, ", ") {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}

// predecessorLeftovers is what helm-operator-plugins leaves in a status,
// with another controller's condition.
func predecessorLeftovers() api.Status {
	at := metav1.NewTime(t0.Add(-time.Hour))
	st := api.Status{DeployedRelease: &api.DeployedRelease{Name: "app", Manifest: "---\n# stale\n"}}
	st.Conditions = []metav1.Condition{
		{Type: "example.com/Audited", Status: "True", Reason: "Checked", Message: "by the auditor", LastTransitionTime: at},
		{Type: api.ConditionDeployed, Status: "True", Reason: string(api.ReasonInstallSuccessful), LastTransitionTime: at},
		{Type: api.ConditionInitialized, Status: "True", LastTransitionTime: at},
		{Type: api.ConditionIrreconcilable, Status: "False", LastTransitionTime: at},
		{Type: api.ConditionPaused, Status: "False", LastTransitionTime: at},
		{Type: api.ConditionReleaseFailed, Status: "False", LastTransitionTime: at},
	}
	return st
}

// By default the first step drops the predecessors' conditions and
// deployedRelease, and keeps another controller's condition as it was.
func TestMachinePredecessorStatusRemoved(t *testing.T) {
	m := newMachine(t, nil)
	m.st = predecessorLeftovers()
	audited := m.st.Conditions[0]
	m.run(5)
	for _, typ := range api.PredecessorConditions() {
		if c := meta.FindStatusCondition(m.st.Conditions, typ); c != nil {
			t.Errorf("%s stayed: %+v", typ, *c)
		}
	}
	if c := meta.FindStatusCondition(m.st.Conditions, "example.com/Audited"); c == nil || *c != audited {
		t.Errorf("another controller's condition changed: %+v, was %+v", c, audited)
	}
	if m.st.DeployedRelease != nil {
		t.Errorf("deployedRelease stayed: %+v", m.st.DeployedRelease)
	}
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionTrue {
		t.Errorf("Ready %+v", c)
	}
}

// With statusCompat: HelmOperator, Deployed, ReleaseFailed, Irreconcilable,
// Initialized and deployedRelease follow the release through an install,
// a failed upgrade and a good one; the manifest is read once per revision.
func TestMachinePredecessorStatusKept(t *testing.T) {
	m := newMachine(t, nil)
	m.target.Watch.StatusCompat = watches.StatusCompatHelmOperator
	m.st = predecessorLeftovers()
	m.run(5)
	m.wantCompat(t, "True", api.ReasonInstallSuccessful, "False", 1, "v1")
	if c := m.cond(api.ConditionPaused); c.Type != "" {
		t.Errorf("Paused stayed: %+v", c)
	}
	gets := m.helm.gets
	m.step() // in sync: nothing new to read
	if m.helm.gets != gets {
		t.Errorf("a step in sync read %d revisions", m.helm.gets-gets)
	}

	m.setSpec("fail-me")
	m.step() // the upgrade fails
	m.wantCompat(t, "False", api.ReasonUpgradeFailed, "True", 1, "v1")
	if c := m.cond(api.ConditionReleaseFailed); c.Reason != string(api.ReasonUpgradeError) || !strings.Contains(c.Message, "fail-me") {
		t.Errorf("ReleaseFailed %s: %s, want UpgradeError saying why", c.Reason, c.Message)
	}
	if c := m.cond(api.ConditionIrreconcilable); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonReconcileError) {
		t.Errorf("Irreconcilable %+v", c)
	}

	m.setSpec("v3")
	m.clock.Step(time.Hour) // past the backoff
	m.run(8)
	m.wantCompat(t, "True", api.ReasonUpgradeSuccessful, "False", m.st.Release.Revision, "v3")
}

// wantCompat checks Deployed's status and reason, ReleaseFailed's status,
// Initialized True, and deployedRelease: the release's, of revision rev,
// its manifest holding data.
func (m *machine) wantCompat(t *testing.T, deployed metav1.ConditionStatus, reason api.Reason, failed metav1.ConditionStatus, rev int, data string) {
	t.Helper()
	if c := m.cond(api.ConditionDeployed); c.Status != deployed || c.Reason != string(reason) || c.ObservedGeneration != m.obj.GetGeneration() {
		t.Errorf("Deployed %+v, want %s %s", c, deployed, reason)
	}
	if c := m.cond(api.ConditionReleaseFailed); c.Status != failed {
		t.Errorf("ReleaseFailed %+v, want %s", c, failed)
	}
	if c := m.cond(api.ConditionInitialized); c.Status != metav1.ConditionTrue {
		t.Errorf("Initialized %+v", c)
	}
	dr := m.st.DeployedRelease
	if dr == nil || dr.Name != "app" || dr.Revision != rev || !strings.Contains(dr.Manifest, "data: "+data) {
		t.Errorf("deployedRelease %+v, want app's revision %d holding %s", dr, rev, data)
	}
}

func TestDeployedManifest(t *testing.T) {
	secret := "---\n# Source: app/templates/secret.yaml\napiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: aHVudGVyMjI=\nstringData:\n  token: plain-token\n"
	cm := "---\n# Source: app/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  apiKey: s3cr3t-key\n"
	got := deployedManifest(cm+secret, values.NewRedactor([]string{"s3cr3t-key"}), "app", "ns")
	for _, leak := range []string{"aHVudGVyMjI=", "plain-token", "s3cr3t-key"} {
		if strings.Contains(got, leak) {
			t.Errorf("the manifest keeps %q:\n%s", leak, got)
		}
	}
	for _, kept := range []string{"# Source: app/templates/secret.yaml\n", "kind: Secret", "password: '" + values.Redacted + "'", "token: '" + values.Redacted + "'", "name: cfg"} {
		if !strings.Contains(got, kept) {
			t.Errorf("the manifest lost %q:\n%s", kept, got)
		}
	}

	// A manifest over the bound keeps whole documents and says what it left out.
	big := strings.Repeat("x", maxDeployedManifest/3)
	doc := "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  d: " + big + "\n"
	got = deployedManifest(doc+doc+doc+doc, nil, "app", "ns")
	if len(got) > maxDeployedManifest+512 || strings.Count(got, "kind: ConfigMap") != 2 ||
		!strings.Contains(got, "# chartkeeper: 2 of 4 documents left out") || !strings.Contains(got, "helm get manifest app -n ns") {
		t.Errorf("a large manifest kept %d bytes, %d documents; ends %q", len(got), strings.Count(got, "kind: ConfigMap"), got[len(got)-200:])
	}
}
