package helm

import (
	"context"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// pdbChart renders a PodDisruptionBudget only above one replica, as charts
// commonly do, and a ConfigMap whose key comes from the values: a key the
// API server refuses makes an upgrade fail after its revision is stored.
func pdbChart() *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "pdb", Version: "1.0.0"},
		Values:   map[string]any{"replicas": 1, "key": "ok"},
		Templates: []*chart.File{
			{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  {{ .Values.key | quote }}: {{ .Values.replicas | quote }}\n")},
			{Name: "templates/pdb.yaml", Data: []byte("{{- if gt (int .Values.replicas) 1 }}\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  maxUnavailable: 1\n  selector:\n    matchLabels:\n      app: {{ .Release.Name }}\n{{- end }}\n")},
		},
	}
}

// A rollback brings back an object the failed revision's manifest does not
// name but which is still live (the failed upgrade stopped before it could
// delete it). Helm v3.22 patches such an object from the live one whole,
// clearing resourceVersion, which a PodDisruptionBudget refuses; the
// rollback must succeed, the PDB patched in place, and Helm's records must
// say what happened.
func TestRollbackPatchesAnObjectTheFailedRevisionDropped(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	c, err := New(env.Config, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := func(vals map[string]any) Request {
		return Request{Name: "web", Namespace: ns, Chart: pdbChart(), Values: vals}
	}
	if _, err := c.Install(ctx, req(map[string]any{"replicas": 1, "key": "ok"})); err != nil {
		t.Fatalf("install: %v", err)
	}
	if _, err := c.Upgrade(ctx, req(map[string]any{"replicas": 2, "key": "ok"})); err != nil {
		t.Fatalf("upgrade to 2 replicas: %v", err)
	}
	var before policyv1.PodDisruptionBudget
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &before); err != nil {
		t.Fatalf("the PDB of revision 2: %v", err)
	}
	if _, err := c.Upgrade(ctx, req(map[string]any{"replicas": 1, "key": "not a key!"})); err == nil {
		t.Fatal("revision 3 with a ConfigMap key the API server refuses: upgrade succeeded")
	}
	if err := c.Rollback(ctx, "web", ns, 2, 0, Guard{}); err != nil {
		t.Fatalf("rollback to revision 2: %v", err)
	}
	var after policyv1.PodDisruptionBudget
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web"}, &after); err != nil {
		t.Fatalf("the PDB after the rollback: %v", err)
	}
	if after.UID != before.UID {
		t.Errorf("the PDB was recreated: uid %s, was %s", after.UID, before.UID)
	}
	if after.Labels["app.kubernetes.io/managed-by"] != "Helm" || after.Annotations["meta.helm.sh/release-name"] != "web" {
		t.Errorf("the PDB lost Helm's marks: %v %v", after.Labels, after.Annotations)
	}
	revs, err := c.StoredRevisions(ctx, "web", ns)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range revs {
		got = append(got, string(r.Status)+"/"+string(r.MadeBy()))
	}
	if want := "superseded/install superseded/upgrade failed/upgrade deployed/rollback"; strings.Join(got, " ") != want {
		t.Errorf("revisions %v, want %s", got, want)
	}
	if revs[2].Deployed() || !revs[1].Deployed() {
		t.Errorf("revision 3 (failed) counted as deployed, or revision 2 not: %+v", revs)
	}
	if rel, err := c.Get(ctx, "web", ns, 4); err != nil || rel.Info.Status != release.StatusDeployed {
		t.Errorf("revision 4: %v %v", rel, err)
	}
}
