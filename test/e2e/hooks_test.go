package e2e

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Built-in hooks turned on in watches.yaml, through the real operator:
// credentials made once and kept across upgrades, rotated on request (the
// release rolls), certificates issued, status.app filled.
func TestBuiltInHooksThroughTheOperator(t *testing.T) {
	parallel(t, 15*time.Second)
	env, ns, _ := appFixture(t, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-hooks.yaml"))
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "db", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "db", 1)
	getSecret := func(name string) *corev1.Secret { return readSecret(t, env, ns, name) }
	cred := getSecret("db-credentials")
	for _, n := range []string{"db-ca", "db-tls-server", "db-tls-peer"} {
		getSecret(n)
	}
	if vals := helmCmd(t, env, "get", "values", "db", "-n", ns); !strings.Contains(vals, "secretName: db-credentials") || !strings.Contains(vals, "serverSecret: db-tls-server") {
		t.Errorf("release values lack the hook values:\n%s", vals)
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		_, s, err := getApp(ctx, env, ns, "db")
		if err != nil {
			return err
		}
		if ip, _ := s.App["clusterIP"].(string); ip == "" || s.App["readyReplicas"] == nil {
			return fmt.Errorf("status.app %v", s.App)
		}
		return nil
	})

	patchSpec(t, env, ns, "db", map[string]any{"replicas": 2})
	waitReady(t, env, ns, "db", 2)
	if again := getSecret("db-credentials"); again.ResourceVersion != cred.ResourceVersion || !bytes.Equal(again.Data["password"], cred.Data["password"]) {
		t.Error("an upgrade changed the credentials")
	}

	app := newApp(ns, "db", nil)
	patch := []byte(`{"metadata":{"annotations":{"chartkeeper.dev/rotate-credentials":"now"}}}`)
	if err := env.Client.Patch(ctx, app, client.RawPatch(types.MergePatchType, patch)); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "db", 3) // the checksum changed: the release rolled
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		s := getSecret("db-credentials")
		if bytes.Equal(s.Data["password"], cred.Data["password"]) {
			return fmt.Errorf("not rotated")
		}
		if _, ok := s.Data["previous-password"]; ok {
			return fmt.Errorf("previous password still kept after the release rolled")
		}
		return nil
	})
}

// Certificates are renewed at 2/3 of their lifetime by the TLS hook's own
// requeue (no event needed), the release rolls to a new revision, and the
// CA survives.
func TestCertificatesRenewAndRollTheRelease(t *testing.T) {
	parallel(t, 20*time.Second)
	env, ns, _ := appFixture(t, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-tls-short.yaml"))
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "web", map[string]any{"replicas": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "web", 1)
	read := func(name string) *corev1.Secret { return readSecret(t, env, ns, name) }
	ca, server := read("web-ca"), read("web-tls-server")
	waitReady(t, env, ns, "web", 2) // about 16 s later
	if renewed := read("web-tls-server"); bytes.Equal(renewed.Data["tls.crt"], server.Data["tls.crt"]) {
		t.Error("revision 2 without a renewed certificate")
	}
	if !bytes.Equal(read("web-ca").Data["ca.crt"], ca.Data["ca.crt"]) {
		t.Error("the CA changed on renewal")
	}
}

func readSecret(t *testing.T, env *testenv.Env, ns, name string) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, s); err != nil {
		t.Fatalf("Secret %s: %v", name, err)
	}
	return s
}
