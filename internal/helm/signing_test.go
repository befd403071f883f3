package helm

import (
	"bytes"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
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
