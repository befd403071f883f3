package helm

import (
	"context"
	"math/rand"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// bigRelease is a release whose encoded record is over size bytes
// (an incompressible manifest).
func bigRelease(version, size int) *release.Release {
	rnd := rand.New(rand.NewSource(int64(version)))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte('a' + rnd.Intn(26))
	}
	return &release.Release{Name: "mon", Namespace: "ns", Version: version, Manifest: string(b),
		Info:   &release.Info{Status: release.StatusDeployed},
		Labels: map[string]string{"chartkeeper.dev/managed": "true", "chartkeeper.dev/owner-uid": "u1"}}
}

func TestStorageOfLargeReleases(t *testing.T) {
	tests := []struct {
		name    string
		kind    Storage
		size    int
		wantErr string // "": stored
	}{
		{"secret: a small release", StorageSecret, 1000, ""},
		{"secret: over 1 MiB is refused with the fix", StorageSecret, 3 << 20, "set storage: chunked"},
		{"chunked: a small release", StorageChunked, 1000, ""},
		{"chunked: over 3 MiB", StorageChunked, 3 << 20, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := fake.NewSimpleClientset()
			secrets := cs.CoreV1().Secrets("ns")
			st := newStorage(secrets, tt.kind, func(string, ...any) {})
			err := st.Create(bigRelease(1, tt.size))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rel := bigRelease(1, tt.size)
			rel.Info.Status = release.StatusSuperseded
			if err := st.Update(rel); err != nil {
				t.Fatal(err)
			}
			list, err := secrets.List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			revisions := 0
			for _, s := range list.Items {
				size := 0
				for _, v := range s.Data {
					size += len(v)
				}
				if size > SecretLimit {
					t.Errorf("Secret %s holds %d bytes", s.Name, size)
				}
				if s.Labels["chartkeeper.dev/managed"] != "true" || s.Labels["chartkeeper.dev/owner-uid"] != "u1" {
					t.Errorf("Secret %s lacks the release's labels: %v", s.Name, s.Labels)
				}
				if name, ok := ReleaseOf(s.Labels); ok {
					revisions++
					if name != "mon" || s.Labels["version"] != "1" || s.Labels["status"] != "superseded" {
						t.Errorf("revision Secret %s labels %v", s.Name, s.Labels)
					}
				}
			}
			if revisions != 1 {
				t.Errorf("%d Secrets name a revision, want 1 (chunks do not)", revisions)
			}
			got, err := st.Get("mon", 1)
			if err != nil || got.Manifest != rel.Manifest || got.Info.Status != release.StatusSuperseded {
				t.Fatalf("read back: %v", err)
			}
			if _, err := st.Delete("mon", 1); err != nil {
				t.Fatal(err)
			}
			if list, _ := secrets.List(context.Background(), metav1.ListOptions{}); len(list.Items) > 0 {
				t.Errorf("%d Secrets left after delete", len(list.Items))
			}
		})
	}
}

func TestStorageOfContext(t *testing.T) {
	if got := storageOf(context.Background()); got != StorageSecret {
		t.Errorf("default = %q", got)
	}
	if got := storageOf(WithStorage(context.Background(), StorageChunked)); got != StorageChunked {
		t.Errorf("carried = %q", got)
	}
}

// Switching a watch's storage: the revisions stored the other way are
// still read and updated where they are (superseded by an upgrade; never
// deleted to be created anew, which a failure in between would lose), and
// new revisions are stored the new way.
func TestStorageSwitchReadsTheOtherFormat(t *testing.T) {
	tests := []struct {
		name     string
		from, to Storage
		wantType map[string]string // Secret type of each revision afterwards
	}{
		{"secret to chunked", StorageSecret, StorageChunked, map[string]string{"1": "helm.sh/release.v1", "2": "operatorframework.io/index.v1"}},
		{"chunked to secret", StorageChunked, StorageSecret, map[string]string{"1": "operatorframework.io/index.v1", "2": "helm.sh/release.v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secrets := fake.NewSimpleClientset().CoreV1().Secrets("ns")
			log := func(string, ...any) {}
			if err := newStorage(secrets, tt.from, log).Create(bigRelease(1, 1000)); err != nil {
				t.Fatal(err)
			}
			st := newStorage(secrets, tt.to, log)
			last, err := st.Deployed("mon")
			if err != nil || last.Version != 1 {
				t.Fatalf("the deployed revision stored the other way: %v %v", last, err)
			}
			last.Info.Status = release.StatusSuperseded
			if err := st.Update(last); err != nil {
				t.Fatal(err)
			}
			if err := st.Create(bigRelease(2, 1000)); err != nil {
				t.Fatal(err)
			}
			hist, err := st.History("mon")
			if err != nil || len(hist) != 2 {
				t.Fatalf("history %d revisions, %v", len(hist), err)
			}
			if got, err := st.Get("mon", 1); err != nil || got.Info.Status != release.StatusSuperseded {
				t.Fatalf("revision 1 after its update: %v %v", got, err)
			}
			list, err := secrets.List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list.Items {
				if _, ok := ReleaseOf(s.Labels); ok && string(s.Type) != tt.wantType[s.Labels["version"]] {
					t.Errorf("revision %s is stored as %s, want %s", s.Name, s.Type, tt.wantType[s.Labels["version"]])
				}
			}
			for _, v := range []int{1, 2} {
				if _, err := st.Delete("mon", v); err != nil {
					t.Fatal(err)
				}
			}
			if list, _ := secrets.List(context.Background(), metav1.ListOptions{}); len(list.Items) > 0 {
				t.Errorf("%d Secrets left after delete", len(list.Items))
			}
		})
	}
}

// Back from chunked to secret, a revision too large for one Secret stays
// chunked when it is rewritten: it is not lost.
func TestStorageSwitchKeepsWhatDoesNotFit(t *testing.T) {
	secrets := fake.NewSimpleClientset().CoreV1().Secrets("ns")
	log := func(string, ...any) {}
	if err := newStorage(secrets, StorageChunked, log).Create(bigRelease(1, 3<<20)); err != nil {
		t.Fatal(err)
	}
	st := newStorage(secrets, StorageSecret, log)
	rel, err := st.Get("mon", 1)
	if err != nil {
		t.Fatal(err)
	}
	rel.Info.Status = release.StatusSuperseded
	if err := st.Update(rel); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get("mon", 1); err != nil || got.Info.Status != release.StatusSuperseded {
		t.Fatalf("revision 1 after the rewrite: %v", err)
	}
	if err := st.Create(bigRelease(2, 3<<20)); err == nil || !strings.Contains(err.Error(), "storage: chunked") {
		t.Errorf("a new revision over 1 MiB with storage secret: %v", err)
	}
}
