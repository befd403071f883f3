package builtin_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// owner creates a real object to own what hooks create (a ConfigMap stands
// in for a custom resource) and returns a hook request for it.
func owner(t *testing.T, env *testenv.Env, ns, name string, now func() time.Time) hooks.Request {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if err := env.Client.Create(context.Background(), cm); err != nil {
		t.Fatal(err)
	}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	if now == nil {
		now = time.Now
	}
	return hooks.Request{Object: u, Client: env.Client, ReleaseName: name, ReleaseNamespace: ns, Now: now,
		Log: logr.Discard(), AppStatus: map[string]any{}}
}

func secret(t *testing.T, env *testenv.Env, ns, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, s); err != nil {
		t.Fatal(err)
	}
	return s
}
