package helm

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/intern"
)

// TestSecretMetaRebuildsWhatTheServerSent checks that a Secret the cache
// rebuilds from what it kept is the Secret it was given, without data and
// managedFields, whether its metadata was kept as fields (a release
// Secret's usual) or whole (anything more).
func TestSecretMetaRebuildsWhatTheServerSent(t *testing.T) {
	usual := func() *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name: "sh.helm.release.v1.web.v2", Namespace: "team-a", UID: "0b6c6a3e-8d5e-4a4b-9a57-3c1f7c1f2d10",
				ResourceVersion: "48213", CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)),
				Labels:        map[string]string{"name": "web", "owner": "helm", "status": "deployed", "version": "2"},
				ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "chartkeeper", Operation: metav1.ManagedFieldsOperationUpdate}},
			},
			Type: "helm.sh/release.v1",
			Data: map[string][]byte{"release": []byte("H4sI")},
		}
	}
	yes := true
	for _, tc := range []struct {
		name  string
		edit  func(*corev1.Secret)
		whole bool
	}{
		{"a release Secret", func(*corev1.Secret) {}, false},
		{"immutable", func(s *corev1.Secret) { s.Immutable = &yes }, false},
		{"no labels", func(s *corev1.Secret) { s.Labels = nil }, false},
		{"annotated", func(s *corev1.Secret) { s.Annotations = map[string]string{"backup.example.com/skip": "true"} }, true},
		{"owned", func(s *corev1.Secret) {
			s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "index", UID: "u"}}
		}, true},
		{"with a finalizer", func(s *corev1.Secret) { s.Finalizers = []string{"example.com/hold"} }, true},
		{"being deleted", func(s *corev1.Secret) { now := metav1.Now(); s.DeletionTimestamp = &now }, true},
		{"with its kind", func(s *corev1.Secret) { s.APIVersion, s.Kind = "v1", "Secret" }, true},
		{"a resourceVersion not in canonical form", func(s *corev1.Secret) { s.ResourceVersion = "048213" }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := usual()
			tc.edit(s)
			rv, _ := parseRV(s.ResourceVersion)
			l := intern.Default.Map(s.Labels)
			m := keepMeta(s, l)
			if got := m.whole != nil; got != tc.whole {
				t.Fatalf("kept whole: %v, want %v", got, tc.whole)
			}
			got := m.secret(s.Namespace, s.Name, l, rv)
			want := s.DeepCopy()
			want.Data, want.ManagedFields = nil, nil
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("rebuilt Secret differs (-sent +rebuilt):\n%s", d)
			}
			if got.Labels != nil {
				got.Labels["status"] = "changed by the caller"
				if again := m.secret(s.Namespace, s.Name, l, rv); again.Labels["status"] == "changed by the caller" {
					t.Fatal("a caller's change to a read Secret's labels reached the cache")
				}
			}
			if got.Immutable != nil {
				*got.Immutable = false
				if again := m.secret(s.Namespace, s.Name, l, rv); !*again.Immutable {
					t.Fatal("a caller's change to a read Secret's immutable reached the cache")
				}
			}
		})
	}
}
