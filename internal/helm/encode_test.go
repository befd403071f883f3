package helm

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func testRelease(name string, version int) *release.Release {
	return &release.Release{Name: name, Namespace: "ns", Version: version,
		Info:     &release.Info{Status: release.StatusDeployed, Description: "install"},
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "app", Version: "1.0.0"}},
		Config:   map[string]any{"message": name},
		Manifest: fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\n", name),
		Labels:   map[string]string{"chartkeeper.dev/managed": "true", "name": "ignored: Helm's own label wins"},
	}
}

// The driver writes the Secret Helm's driver writes: same name, type,
// labels, and data Helm's driver (and so the helm CLI) decodes.
func TestSecretsDriverWritesHelmsSecret(t *testing.T) {
	ctx := context.Background()
	ours := fake.NewClientset().CoreV1().Secrets("ns")
	helms := fake.NewClientset().CoreV1().Secrets("ns")
	rls := testRelease("web", 3)
	key := "sh.helm.release.v1.web.v3"
	if err := newSecretsDriver(ours, t.Logf).Create(key, rls); err != nil {
		t.Fatal(err)
	}
	if err := driver.NewSecrets(helms).Create(key, rls); err != nil {
		t.Fatal(err)
	}
	a, err := ours.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := helms.Get(ctx, key, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	delete(a.Labels, "createdAt")
	delete(b.Labels, "createdAt")
	if a.Type != b.Type || !reflect.DeepEqual(a.Labels, b.Labels) {
		t.Errorf("Secret differs from Helm's: type %q labels %v, Helm's: %q %v", a.Type, a.Labels, b.Type, b.Labels)
	}
	got, err := driver.NewSecrets(ours).Get(key)
	if err != nil {
		t.Fatalf("Helm's driver cannot read it: %v", err)
	}
	if got.Name != "web" || got.Version != 3 || got.Manifest != rls.Manifest || got.Config["message"] != "web" {
		t.Errorf("decoded %+v", got)
	}

	rls.Info.Status = release.StatusSuperseded
	if err := newSecretsDriver(ours, t.Logf).Update(key, rls); err != nil {
		t.Fatal(err)
	}
	a, _ = ours.Get(ctx, key, metav1.GetOptions{})
	if a.Labels["status"] != "superseded" || a.Labels["modifiedAt"] == "" {
		t.Errorf("after update: labels %v", a.Labels)
	}
	if err := newSecretsDriver(ours, t.Logf).Create(key, rls); err != driver.ErrReleaseExists {
		t.Errorf("second create: %v, want driver.ErrReleaseExists", err)
	}
}

// Concurrent writes take turns at one compressor, and each write's data is
// its own release.
func TestEncodeReleaseConcurrently(t *testing.T) {
	dropCompressor()
	made := gzipWritersMade.Load()
	secrets := fake.NewClientset().CoreV1().Secrets("ns")
	d := newSecretsDriver(secrets, t.Logf)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 16 {
		name := fmt.Sprintf("r%d", i)
		rls := testRelease(name, 1)
		var m strings.Builder // a large manifest: long enough to compress that the writes overlap
		for j := range 4000 {
			fmt.Fprintf(&m, "# line %d of %s\n", j*7919%10007, name)
		}
		rls.Manifest = m.String()
		wg.Go(func() {
			<-start
			if err := d.Create("sh.helm.release.v1."+name+".v1", rls); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	// One compressor for them all (a pool bounded at GOMAXPROCS made up
	// to twice that; one per write without the bound).
	if n := gzipWritersMade.Load() - made; n != 1 {
		t.Errorf("16 concurrent writes made %d compressors, want 1", n)
	}
	for i := range 16 {
		name := fmt.Sprintf("r%d", i)
		got, err := d.Get("sh.helm.release.v1." + name + ".v1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != name || got.Config["message"] != name {
			t.Errorf("%s decoded as %s (%v)", name, got.Name, got.Config)
		}
	}
}
