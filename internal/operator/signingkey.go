package operator

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/chartkeeper/chartkeeper/internal/helm"
)

// SigningKeySecret is the default name of the Secret holding the key that
// signs stored release revisions (helm.LabelSignature), in the operator's
// own namespace.
const SigningKeySecret = "chartkeeper-release-signing-key"

// signingKeyField is the Secret's key holding the signing key.
const signingKeyField = "key"

// WithSigningKey makes the release storage sign every revision with the
// key held in the Secret at ref, created with a random key when there is
// none. Default: none (revisions are not signed; the run command always
// sets one).
func WithSigningKey(ref types.NamespacedName) Option {
	return func(o *options) { o.signingKey = ref }
}

// loadSigningKey reads the signing key from its Secret, creating the
// Secret with a random key when it does not exist (the first start; a
// replica starting at the same time reads the one created first). It costs
// one GET at start, and a create the first time.
func loadSigningKey(cs kubernetes.Interface, ref types.NamespacedName) (helm.SigningKey, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secrets := cs.CoreV1().Secrets(ref.Namespace)
	s, err := secrets.Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		s, err = secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace,
				Labels: map[string]string{"app.kubernetes.io/name": "chartkeeper", "app.kubernetes.io/component": "release-signing-key"}},
			Type: corev1.SecretTypeOpaque,
			Data: map[string][]byte{signingKeyField: key},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			s, err = secrets.Get(ctx, ref.Name, metav1.GetOptions{})
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the release signing key (Secret %s): %w", ref, err)
	}
	key := s.Data[signingKeyField]
	if len(key) < helm.MinSigningKey {
		return nil, errors.New("the release signing key (Secret " + ref.String() + ", key \"" + signingKeyField +
			fmt.Sprintf("\") has %d bytes, at least %d are needed", len(key), helm.MinSigningKey))
	}
	return key, nil
}
