package testenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/modfile"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/chartkeeper/chartkeeper/test/devcluster"
)

// KubeconfigEnv names the variable that points tests at a running cluster.
const KubeconfigEnv = "CHARTKEEPER_TEST_KUBECONFIG"

// Env is a cluster as tests see it.
type Env struct {
	// Kubeconfig is the admin kubeconfig's path.
	Kubeconfig string
	Config     *rest.Config
	Client     client.Client
	Clientset  kubernetes.Interface
}

var (
	once     sync.Once
	shared   *Env
	sharedEr error
	ownDir   string // set when this binary started its own cluster
)

// Main runs the tests, then each of after (waits for work the package
// started in the background, say), then stops the cluster this binary
// started, if any.
func Main(m *testing.M, after ...func()) {
	code := m.Run()
	for _, f := range after {
		f()
	}
	if ownDir != "" {
		if err := devcluster.Purge(ownDir, nil); err != nil {
			fmt.Fprintf(os.Stderr, "testenv: stopping the test cluster: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// RepoRoot returns the repository's root directory: the nearest directory
// at or above the working directory whose go.mod declares this module (go
// test runs each package's tests in its directory; the tools run from the
// root). Failing that, the directory this source file was compiled from,
// which a binary built with -trimpath (as make test builds them, so that
// clones share them) does not know.
func RepoRoot() string {
	rootOnce.Do(func() { repoRoot = findRepoRoot() })
	return repoRoot
}

// modulePath is this repository's module, as go.mod declares it.
const modulePath = "github.com/chartkeeper/chartkeeper"

var (
	rootOnce sync.Once
	repoRoot string
)

func findRepoRoot() string {
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if declaresModule(filepath.Join(dir, "go.mod")) {
				return dir
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
	}
	panic("testenv: no go.mod of " + modulePath + " at or above the working directory; run from inside the repository")
}

// declaresModule reports whether the go.mod file at path declares
// modulePath.
func declaresModule(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && modfile.ModulePath(b) == modulePath
}

// BinDir returns the directory of the control-plane binaries.
func BinDir() string { return filepath.Join(RepoRoot(), "bin") }

// NeedsCluster skips the test under -short (make test-unit): it needs the
// local cluster or the control-plane binaries in bin/, which make test
// builds and starts.
func NeedsCluster(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the local cluster or bin/ (make test runs it; -short skips it)")
	}
}

// Cluster returns the shared cluster, starting it on first use. It fails the
// test if no cluster can be had; under -short it skips the test.
func Cluster(t testing.TB) *Env {
	t.Helper()
	NeedsCluster(t)
	once.Do(func() { shared, sharedEr = connect() })
	if sharedEr != nil {
		t.Fatalf("testenv: no cluster: %v", sharedEr)
	}
	return shared
}

func connect() (*Env, error) {
	kc := os.Getenv(KubeconfigEnv)
	if kc == "" {
		dir, err := os.MkdirTemp("", "chartkeeper-testcluster-")
		if err != nil {
			return nil, err
		}
		ownDir = dir
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		c, err := devcluster.Up(ctx, devcluster.Config{Dir: dir, BinDir: BinDir(), Nodes: 2, Attached: true})
		if err != nil {
			return nil, err
		}
		kc = c.Kubeconfig()
	}
	return FromKubeconfig(kc)
}

// FromKubeconfig builds an Env for the cluster a kubeconfig points at.
func FromKubeconfig(path string) (*Env, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	cl, err := client.New(cfg, client.Options{})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Env{Kubeconfig: path, Config: cfg, Client: cl, Clientset: cs}, nil
}

// Namespace creates a namespace with a unique name for the test and deletes
// it when the test ends.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "test-", Labels: map[string]string{"chartkeeper.dev/test": "true"}}}
	ctx := context.Background()
	if err := e.Client.Create(ctx, ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), ns) })
	return ns.Name
}

// APIServer starts an etcd and a kube-apiserver from bin/ with envtest and
// stops them when the test ends. Use it when no controllers are needed.
// Under -short it skips the test.
func APIServer(t testing.TB, crdPaths ...string) *rest.Config {
	t.Helper()
	NeedsCluster(t)
	te := &envtest.Environment{BinaryAssetsDirectory: BinDir(), CRDDirectoryPaths: crdPaths, ErrorIfCRDPathMissing: true}
	cfg, err := te.Start()
	if err != nil {
		t.Fatalf("starting envtest from %s (make tools): %v", BinDir(), err)
	}
	t.Cleanup(func() {
		if err := te.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})
	return cfg
}

// Eventually calls fn every interval until it returns nil or timeout passes,
// then fails the test with fn's last error.
func Eventually(t testing.TB, timeout time.Duration, fn func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	// telling is the last answer not cut short by the deadline: the one
	// that says what was still wrong.
	var last, telling error
	for {
		if last = fn(ctx); last == nil {
			return
		}
		cut := ctx.Err() != nil && errors.Is(last, context.DeadlineExceeded)
		if !cut {
			telling = last
		}
		select {
		case <-ctx.Done():
			if cut && telling != nil {
				t.Fatalf("not true after %s: %v (the last answer before the deadline: %v)", timeout, last, telling)
			}
			t.Fatalf("not true after %s: %v", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
