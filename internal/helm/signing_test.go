package helm

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func signedRelease(version int, status release.Status) *release.Release {
	return &release.Release{
		Name: "web", Namespace: "team", Version: version,
		Info:     &release.Info{Status: status, Description: "chartkeeper: App team/web generation 1"},
		Manifest: "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
		Config:   map[string]any{"replicas": 2, "image": "nginx"},
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{Name: "app", Version: "1.0.0"},
			Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap")}},
			Values:    map[string]any{"replicas": 1},
		},
		Labels: map[string]string{"chartkeeper.dev/digest": "abc", "team": "ops"},
	}
}

// What the signature covers: each change a tenant could make to a stored
// revision is refused when it is read back; what it does not cover
// (times, others' labels) is not.
func TestSignedRevisionRefusesEachTamper(t *testing.T) {
	key := SigningKey(bytes.Repeat([]byte{7}, MinSigningKey))
	cases := []struct {
		name   string
		tamper func(*release.Release)
		forged bool
	}{
		{"untouched", func(*release.Release) {}, false},
		{"manifest", func(r *release.Release) {
			r.Manifest += "---\nkind: DaemonSet\nmetadata: {name: x, namespace: kube-system}\n"
		}, true},
		{"values", func(r *release.Release) { r.Config["image"] = "evil" }, true},
		{"chart template", func(r *release.Release) { r.Chart.Templates[0].Data = []byte("kind: Secret") }, true},
		{"chart version", func(r *release.Release) { r.Chart.Metadata.Version = "9.9.9" }, true},
		{"status (any Helm client rewrites it)", func(r *release.Release) { r.Info.Status = release.StatusSuperseded }, false},
		{"hook added", func(r *release.Release) { r.Hooks = append(r.Hooks, &release.Hook{Name: "x", Manifest: "kind: Job"}) }, true},
		{"owner label", func(r *release.Release) { r.Labels["chartkeeper.dev/owner-uid"] = "someone" }, true},
		{"signature of another version (Helm copies labels: unsigned)", func(r *release.Release) { r.Version = 3 }, false},
		{"signature removed", func(r *release.Release) { delete(r.Labels, LabelSignature) }, false}, // unsigned: the engine's to distrust
		{"another tool's label", func(r *release.Release) { r.Labels["team"] = "dev" }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := driver.NewMemory()
			d := signingDriver{Driver: mem, key: key}
			if err := d.Create("sh.helm.release.v1.web.v1", signedRelease(1, release.StatusDeployed)); err != nil {
				t.Fatal(err)
			}
			stored, err := mem.Get("sh.helm.release.v1.web.v1")
			if err != nil {
				t.Fatal(err)
			}
			if stored.Labels[LabelSignature] == "" {
				t.Fatal("no signature stored")
			}
			c.tamper(stored) // the memory driver hands out what it holds
			_, err = d.Get("sh.helm.release.v1.web.v1")
			_, forged := IsForged(err)
			if forged != c.forged || (!c.forged && err != nil) {
				t.Fatalf("Get: %v, want forged %v", err, c.forged)
			}
			rs, err := d.Query(map[string]string{"name": "web", "owner": "helm"})
			if _, forged := IsForged(err); forged != c.forged {
				t.Fatalf("Query: %v, want forged %v", err, c.forged)
			}
			if !c.forged {
				signed := (Revision{Version: rs[0].Version, Labels: rs[0].Labels}).Signed()
				if want := c.name == "untouched" || c.name == "another tool's label" || strings.HasPrefix(c.name, "status"); signed != want {
					t.Errorf("read back signed %v, want %v: %v", signed, want, rs[0].Labels)
				}
			}
		})
	}
}

// Helm rewrites a revision's status through Update: a signed one is
// signed again; an unsigned one stays unsigned (rewriting it must not
// launder what the operator never wrote), while a new revision whose
// labels Helm copied from it is signed.
func TestSigningRewrites(t *testing.T) {
	key := SigningKey(bytes.Repeat([]byte{9}, MinSigningKey))
	mem := driver.NewMemory()
	d := signingDriver{Driver: mem, key: key}
	if err := d.Create("sh.helm.release.v1.web.v1", signedRelease(1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	r, err := d.Get("sh.helm.release.v1.web.v1")
	if err != nil {
		t.Fatal(err)
	}
	r.Info.Status = release.StatusSuperseded
	if err := d.Update("sh.helm.release.v1.web.v1", r); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get("sh.helm.release.v1.web.v1"); err != nil {
		t.Fatalf("superseded revision: %v", err)
	}

	unsigned := signedRelease(2, release.StatusDeployed)
	if err := mem.Create("sh.helm.release.v1.web.v2", unsigned); err != nil { // written by another tool
		t.Fatal(err)
	}
	r2, err := d.Get("sh.helm.release.v1.web.v2")
	if err != nil {
		t.Fatal(err)
	}
	r2.Info.Status = release.StatusSuperseded
	if err := d.Update("sh.helm.release.v1.web.v2", r2); err != nil {
		t.Fatal(err)
	}
	if got, _ := mem.Get("sh.helm.release.v1.web.v2"); got.Labels[LabelSignature] != "" {
		t.Errorf("an unsigned revision was signed when rewritten: %v", got.Labels)
	}
	next := signedRelease(3, release.StatusPendingUpgrade)
	next.Labels = r2.Labels // Helm's upgrade merges the last revision's labels
	if err := d.Create("sh.helm.release.v1.web.v3", next); err != nil {
		t.Fatal(err)
	}
	got, err := d.Get("sh.helm.release.v1.web.v3")
	if err != nil || got.Labels[LabelSignature] == "" || got.Labels[LabelUnsigned] != "" {
		t.Errorf("a new revision is not signed: %v %v", got.Labels, err)
	}
	if r := (Revision{Version: 3, Labels: got.Labels}); !r.Signed() {
		t.Error("Revision.Signed is false for a signed revision")
	}
}

// A revision signed as Helm makes it reads back signed from each storage:
// its hooks as Helm sorts them out of the templates (empty lists, not nil,
// which the storage's encoding drops), failed by a hook (the hook's last
// run and its default delete policy set after the revision was created).
func TestSignedRevisionReadsBackFromStorage(t *testing.T) {
	key := SigningKey(bytes.Repeat([]byte{5}, MinSigningKey))
	hooks, _, err := releaseutil.SortManifests(map[string]string{
		"app/templates/hook.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pre\n  annotations:\n    helm.sh/hook: pre-install\n",
		"app/templates/job.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations:\n    helm.sh/hook: pre-upgrade\n" +
			"    helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded\n    helm.sh/hook-output-log-policy: hook-failed\n",
	}, chartutil.DefaultVersionSet, releaseutil.InstallOrder)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []Storage{StorageSecret, StorageChunked} {
		t.Run(string(kind), func(t *testing.T) {
			st := newStorage(fake.NewClientset().CoreV1().Secrets("team"), kind, t.Logf)
			d := signingDriver{Driver: st.Driver, key: key}
			rls := signedRelease(1, release.StatusPendingInstall)
			rls.Hooks = hooks
			k := "sh.helm.release.v1.web.v1"
			if err := d.Create(k, rls); err != nil {
				t.Fatal(err)
			}
			for _, h := range rls.Hooks { // as Helm's execHook leaves them when the first fails
				if len(h.DeletePolicies) == 0 {
					h.DeletePolicies = []release.HookDeletePolicy{release.HookBeforeHookCreation}
				}
				h.LastRun = release.HookExecution{StartedAt: helmtime.Now(), CompletedAt: helmtime.Now(), Phase: release.HookPhaseFailed}
			}
			rls.SetStatus(release.StatusFailed, "failed pre-install")
			if err := d.Update(k, rls); err != nil {
				t.Fatal(err)
			}
			got, err := d.Get(k)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if !(Revision{Version: got.Version, Labels: got.Labels}).Signed() {
				t.Errorf("read back unsigned: %v", got.Labels)
			}
			if _, err := d.Query(map[string]string{"name": "web", "owner": "helm"}); err != nil {
				t.Fatalf("Query: %v", err)
			}
		})
	}
}

// An uninstall that cannot read the history for a forged revision fails
// with *ForgedError and deletes nothing (Helm's IgnoreNotFound would have
// taken it for a release gone, and reported a success); one of a release
// that is not there is no error.
func TestUninstallOfAForgedReleaseFails(t *testing.T) {
	ctx := context.Background()
	secrets := fake.NewClientset().CoreV1().Secrets("ns")
	st := newStorage(secrets, StorageSecret, t.Logf)
	st.Driver = signingDriver{Driver: st.Driver, key: SigningKey(bytes.Repeat([]byte{3}, MinSigningKey))}
	hc := NewOffline(st, &kubefake.PrintingKubeClient{Out: io.Discard})
	req := Request{Name: "web", Namespace: "ns", Chart: appChart(true), Values: map[string]any{"v": "1"},
		Labels: map[string]string{"chartkeeper.dev/owner-uid": "mine"}}
	if _, err := hc.Install(ctx, req); err != nil {
		t.Fatal(err)
	}
	const key = "sh.helm.release.v1.web.v1"
	s, err := secrets.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Labels["chartkeeper.dev/owner-uid"] = "someone else's"
	if _, err := secrets.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = hc.Uninstall(ctx, "web", "ns", "bye", Guard{})
	if _, forged := IsForged(err); !forged {
		t.Fatalf("uninstall of a forged revision: %v, want a *ForgedError", err)
	}
	if _, err := secrets.Get(ctx, key, metav1.GetOptions{}); err != nil {
		t.Errorf("the forged revision went: %v", err)
	}
	if err := hc.Uninstall(ctx, "absent", "ns", "bye", Guard{}); err != nil {
		t.Errorf("uninstall of a release not there: %v", err)
	}
}
