package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// testDependentsCacheKeepsWhatIsRead: on a real API server, the dependents
// cache keeps of a released object's metadata what the engine reads (its
// labels, its owner and Helm release annotations, the keep policy), drops
// what nobody reads there (another annotation, however large; owner
// references), and two releases' objects share their equal strings.
func (e *env) testDependentsCacheKeepsWhatIsRead(t *testing.T) {
	f := e.newFixture(t, fixtureOptions{})
	f.start(t)
	r := f.reconciler(e.cl)
	names := []string{"first", "second"}
	for _, n := range names {
		f.create(t, f.note(n, nil))
		f.settle(t, r, n)
	}
	blob := strings.Repeat("x", 4096)
	for _, n := range names {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"example.com/blob":%q,%q:"keep"},"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"other","uid":"00000000-0000-0000-0000-000000000001"}]}}`, blob, ownership.ResourcePolicyAnnotation)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: n}}
		if err := e.cl.Patch(context.Background(), cm, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	cached := map[string]*metav1.PartialObjectMetadata{}
	testenv.Eventually(t, waitTimeout, func(ctx context.Context) error {
		for _, n := range names {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			if err := f.deps.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: n}, m); err != nil {
				return err
			}
			if !ownership.Kept(m.Annotations) {
				return fmt.Errorf("%s: the cache has not shown the patch yet", n)
			}
			cached[n] = m
		}
		return nil
	})
	for _, n := range names {
		m := cached[n]
		if m.Labels[api.LabelManaged] != "true" || m.Annotations[api.AnnotationOwner] == "" || m.Annotations["meta.helm.sh/release-name"] != n {
			t.Errorf("%s: what the engine reads is missing: labels %v, annotations %v", n, m.Labels, m.Annotations)
		}
		if _, ok := m.Annotations["example.com/blob"]; ok {
			t.Errorf("%s: an annotation nobody reads is kept", n)
		}
		if len(m.OwnerReferences) > 0 || len(m.ManagedFields) > 0 {
			t.Errorf("%s: owner references or managedFields are kept: %v", n, m.OwnerReferences)
		}
	}
	a, b := cached[names[0]], cached[names[1]]
	if unsafe.StringData(a.Namespace) != unsafe.StringData(b.Namespace) ||
		unsafe.StringData(a.Labels[api.LabelManaged]) != unsafe.StringData(b.Labels[api.LabelManaged]) {
		t.Error("two cached objects hold separate copies of their equal strings")
	}
}
