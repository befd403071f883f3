package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// startHelmOperator runs the pinned helm-operator-plugins peer
// (bin/helm-operator, make peers) on watchesFile, confined to ns
// (WATCH_NAMESPACE), with the admin kubeconfig, its metrics off, its
// probes on a loopback address, leader election off; it returns once the
// peer is ready. Stop it with interrupt; the test's cleanup kills it.
func startHelmOperator(t *testing.T, env *testenv.Env, ns, watchesFile string) *process {
	t.Helper()
	bin := filepath.Join(testenv.BinDir(), "helm-operator")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("the helm-operator-plugins peer is not built (make peers): %v", err)
	}
	probe := freeAddr(t)
	cmd := exec.Command(bin, "run", "--watches-file", watchesFile, "--metrics-bind-address", "0",
		"--health-probe-bind-address", probe, "--leader-elect=false", "--max-concurrent-reconciles", "4")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig, "WATCH_NAMESPACE="+ns)
	p := start(t, cmd)
	p.eventually(t, time.Minute, get200("http://"+probe+"/readyz"))
	return p
}

// revisionSecrets lists the Secrets storing the revisions of release name
// in ns (Helm's Secret driver: owner=helm, name=<release>).
func revisionSecrets(ctx context.Context, env *testenv.Env, ns, name string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	err := env.Client.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": name})
	return list.Items, err
}

// waitRevisions waits until release name in ns has n stored revisions,
// the newest deployed.
func waitRevisions(t *testing.T, env *testenv.Env, ns, name string, n int) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		secrets, err := revisionSecrets(ctx, env, ns, name)
		if err != nil {
			return err
		}
		if len(secrets) != n {
			return fmt.Errorf("release %s has %d revisions, want %d", name, len(secrets), n)
		}
		for _, s := range secrets {
			if s.Labels["version"] == fmt.Sprint(n) && s.Labels["status"] == "deployed" {
				return nil
			}
		}
		return fmt.Errorf("revision %d of release %s is not deployed yet", n, name)
	})
}

// appObjects are the objects charts/app releases for release name (its
// default values), as kind/name.
func appObjects(name string) map[string]schema.GroupVersionKind {
	return map[string]schema.GroupVersionKind{
		"Deployment/" + name:            {Group: "apps", Version: "v1", Kind: "Deployment"},
		"Service/" + name:               {Version: "v1", Kind: "Service"},
		"ConfigMap/" + name + "-config": {Version: "v1", Kind: "ConfigMap"},
	}
}

// objectUIDs reads the UIDs of the objects charts/app released for
// release name in ns.
func objectUIDs(t *testing.T, env *testenv.Env, ns, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for key, gvk := range appObjects(name) {
		m := &metav1.PartialObjectMetadata{}
		m.SetGroupVersionKind(gvk)
		objName := key[len(gvk.Kind)+1:]
		if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: objName}, m); err != nil {
			t.Fatalf("reading %s of release %s: %v", key, name, err)
		}
		out[key] = string(m.GetUID())
	}
	return out
}
