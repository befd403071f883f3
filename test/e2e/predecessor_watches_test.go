package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var sdkAppGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "SdkApp"}

// sdkWatches is a watches.yaml as operator-sdk's Helm plugin scaffolds it
// and its users extend it: the chart under helm-charts/ relative to the
// working directory (/opt/helm in operator-sdk's image), overrideValues
// taking the operator's environment ($VAR and ${VAR}, one of them unset)
// and a sprig template, and every other field operator-sdk and
// helm-operator-plugins read. overrideValuesAsStrings is chartkeeper's:
// it keeps the values strings, as operator-sdk sets them.
const sdkWatches = `# Use the 'create api' subcommand to add watches to this file.
- group: test.chartkeeper.dev
  version: v1
  kind: SdkApp
  chart: helm-charts/sdkapp
  watchDependentResources: true
  overrideValues:
    image.repository: $SDKAPP_REGISTRY/nginx
    image.tag: ${SDKAPP_TAG}
    proxy: ${SDKAPP_UNSET_PROXY}
    greeting: '{{ printf "%s-%s" "hi" "$SDKAPP_TAG" | upper }}'
    replicaCount: "2"
  overrideValuesAsStrings: true
  reconcilePeriod: 1m30s
  maxConcurrentReconciles: 2
  selector:
    matchLabels:
      tier: sdk
  dryRunOption: server
`

// An operator-sdk Helm operator's watches.yaml runs unchanged: the chart
// is found relative to the working directory, the overrides are expanded
// from the environment exactly as operator-sdk expands them (os.ExpandEnv,
// an unset variable giving an empty string, then the template), and the
// release is made with them; the selector leaves other resources alone.
func TestPredecessorWatchesFileRuns(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	work := t.TempDir()
	copyDir(t, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "sdkapp"), filepath.Join(work, "helm-charts", "sdkapp"))
	if err := os.MkdirAll(filepath.Join(work, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	watchesFile := filepath.Join("config", "watches.yaml")
	if err := os.WriteFile(filepath.Join(work, watchesFile), []byte(sdkWatches), 0o644); err != nil {
		t.Fatal(err)
	}
	// The CRD and the operator's RBAC come from the same kind and chart,
	// named by an absolute path: this test process runs elsewhere.
	plain := filepath.Join(work, "plain-watches.yaml")
	if err := os.WriteFile(plain, []byte(fmt.Sprintf("- group: test.chartkeeper.dev\n  version: v1\n  kind: SdkApp\n  chart: %q\n",
		filepath.Join(work, "helm-charts", "sdkapp"))), 0o644); err != nil {
		t.Fatal(err)
	}
	installCRDs(t, env, plain)
	ns := env.Namespace(t)
	environ := []string{"WATCH_NAMESPACE=" + ns, "SDKAPP_REGISTRY=mirror.example:5000", "SDKAPP_TAG=1.25"}
	op := startOperatorIn(t, work, environ, operatorKubeconfig(t, env, plain), watchesFile)
	// The operator says how it runs the kind: the fields as written.
	for _, want := range []string{`"maxConcurrentReconciles":2`, `"reconcilePeriod":"1m30s"`, `"watchDependentResources":true`} {
		if !strings.Contains(op.out.String(), want) {
			t.Errorf("the operator's start does not say %s:\n%s", want, op.out.String())
		}
	}
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{sdkAppGVK}) })

	ctx := context.Background()
	other := newCR(sdkAppGVK, ns, "other", map[string]any{})
	other.SetLabels(map[string]string{"tier": "web"})
	mine := newCR(sdkAppGVK, ns, "web", map[string]any{"replicaCount": 5, "proxy": "squid:3128"})
	mine.SetLabels(map[string]string{"tier": "sdk"})
	for _, cr := range []client.Object{other, mine} {
		if err := env.Client.Create(ctx, cr); err != nil {
			t.Fatal(err)
		}
	}
	waitCRReady(t, env, sdkAppGVK, ns, "web")

	var cm corev1.ConfigMap
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-sdkapp"}, &cm); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"image":            "mirror.example:5000/nginx:1.25", // $VAR and ${VAR}
		"proxy":            "",                               // unset: empty, and it still overrides the spec
		"greeting":         "HI-1.25",                        // expanded, then the template
		"replicaCount":     "2",                              // the override wins over the spec's 5
		"replicaCountKind": "string",                         // as operator-sdk sets it (overrideValuesAsStrings)
	}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("released ConfigMap data[%s] = %q, want %q (data: %v)", k, cm.Data[k], v, cm.Data)
		}
	}
	u, st, err := getCR(ctx, env, sdkAppGVK, ns, "other")
	if err != nil {
		t.Fatal(err)
	}
	if len(u.GetFinalizers()) != 0 || len(st.Conditions) != 0 {
		t.Errorf("a resource the selector does not select was touched: finalizers %v, status %+v", u.GetFinalizers(), st)
	}
}

// A watches.yaml field a predecessor honours and chartkeeper cannot honour
// with the same meaning is refused when the file is loaded, naming the
// field and saying why: the operator exits before it contacts the cluster.
func TestPredecessorWatchesFieldRefused(t *testing.T) {
	parallel(t, quick)
	work := t.TempDir()
	copyDir(t, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "charts", "sdkapp"), filepath.Join(work, "helm-charts", "sdkapp"))
	file := filepath.Join(work, "watches.yaml")
	refused := strings.Replace(sdkWatches, "dryRunOption: server", "dryRunOption: client", 1)
	if err := os.WriteFile(file, []byte(refused), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := operatorBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "run", "--watches-file", file, "--kubeconfig", filepath.Join(work, "absent-kubeconfig"))
	cmd.Dir = work
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("chartkeeper run: %v, want exit code 2 (invalid watches file); output:\n%s", err, out)
	}
	for _, want := range []string{`field "dryRunOption"`, `"client"`, "lookup"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
}

// startOperatorIn is startBinaryEnv run in the working directory dir, as
// an operator image runs its binary in its WORKDIR.
func startOperatorIn(t *testing.T, dir string, environ []string, kubeconfig, watchesFile string) *process {
	t.Helper()
	probe := freeAddr(t)
	cmd := exec.Command(operatorBinary(t), "run", "--kubeconfig", kubeconfig, "--watches-file", watchesFile,
		"--health-probe-bind-address", probe, "--metrics-bind-address", "0", "--release-signing-key", e2eSigningKey)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SDKAPP_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, environ...)
	p := start(t, cmd)
	p.eventually(t, time.Minute, get200("http://"+probe+"/readyz"))
	return p
}

// copyDir copies the regular files of a directory tree.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
