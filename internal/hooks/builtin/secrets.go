package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ownedSecret returns a new Secret in namespace ns, owned by the resource
// when it lives there too (the garbage collector deletes it with the
// resource; an owner reference cannot cross namespaces).
func ownedSecret(owner *unstructured.Unstructured, ns, name string, typ corev1.SecretType) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns,
			Labels: map[string]string{"app.kubernetes.io/managed-by": "chartkeeper"},
		},
		Type: typ,
		Data: map[string][]byte{},
	}
	if ns == owner.GetNamespace() {
		s.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: owner.GetAPIVersion(), Kind: owner.GetKind(), Name: owner.GetName(), UID: owner.GetUID(),
			BlockOwnerDeletion: ptr.To(true),
		}}
	}
	return s
}

// getSecret reads a Secret; found is false when it does not exist.
func getSecret(ctx context.Context, c client.Client, ns, name string) (s *corev1.Secret, found bool, err error) {
	s = &corev1.Secret{}
	err = c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading Secret %s/%s: %w", ns, name, err)
	}
	return s, true, nil
}

// checksum fingerprints secret data (keys sorted) without revealing it.
func checksum(data map[string][]byte) string {
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%d:", k, len(data[k]))
		h.Write(data[k])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// setValue sets vals[key] = v for a top-level key, merging maps.
func setValue(vals map[string]any, key string, v map[string]any) {
	cur, _ := vals[key].(map[string]any)
	if cur == nil {
		cur = map[string]any{}
	}
	for k, x := range v {
		cur[k] = x
	}
	vals[key] = cur
}
