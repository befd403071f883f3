package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/framework/childproc"
	"github.com/chartkeeper/chartkeeper/test/framework/longestfirst"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

func TestMain(m *testing.M) {
	flag.Parse()
	sched = longestfirst.FromParallelFlag()
	if !testing.Short() {
		// Every binary the cluster tests run is built at once, in the
		// background: the builds (each links a whole operator) then use
		// the CPUs while the serial tests, which mostly wait for the
		// cluster, run, not beside the parallel ones. buildBinary waits
		// for them.
		for _, pkg := range prebuilt {
			prebuilds.Go(func() { prebuild(pkg) })
		}
	}
	testenv.Main(m, prebuilds.Wait) // no build outlives the tests
}

// sched gives the parallel tests their -parallel slots, longest first.
var sched *longestfirst.Scheduler

// quick is the duration parallel is given for a test of a few seconds.
const quick time.Duration = 0

// parallel runs t beside the other parallel tests (t.Parallel) once one of
// the -parallel slots is free. about is roughly how long t takes in a full
// make test on 2 cores (quick for a few seconds): the longest start first,
// so that the suite does not end waiting for a long test that started last
// (test/framework/longestfirst).
func parallel(t *testing.T, about time.Duration) {
	t.Helper()
	sched.Parallel(t, about)
}

// prebuilds are TestMain's background builds.
var prebuilds sync.WaitGroup

// prebuilt are the commands TestMain starts building: the operator, and
// the builds of it with test hooks, and the chunked-storage
// helm-operator-plugins peer (test/peers/hopchunked).
var prebuilt = []string{"./cmd/chartkeeper", "./test/e2e/testdata/hookfail", "./test/e2e/testdata/redactop", "./test/peers/hopchunked"}

// builds holds one build per package path (a *build).
var builds sync.Map

type build struct {
	once sync.Once
	path string
	err  error
}

// operatorBinary builds cmd/chartkeeper once per test binary.
func operatorBinary(t *testing.T) string { return buildBinary(t, "./cmd/chartkeeper") }

// buildBinary builds the command in pkg (a path from the repository root)
// once per test binary and returns the binary's path.
func buildBinary(t *testing.T, pkg string) string {
	t.Helper()
	b := prebuild(pkg)
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// prebuild builds the command in pkg once per test binary (a second
// caller waits for the first's build) and returns the build.
func prebuild(pkg string) *build {
	v, _ := builds.LoadOrStore(pkg, &build{})
	b := v.(*build)
	b.once.Do(func() {
		// Kept in the repository's tmp/ (as make test keeps its fuzz
		// binaries), so nothing is left in the system's temporary
		// directory. hack/golink.sh builds through Go's build cache: a
		// command whose sources did not change is not linked again, not
		// even in a fresh clone.
		root := testenv.RepoRoot()
		dir := filepath.Join(root, "tmp", "e2e-bin", filepath.Clean(pkg))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, filepath.Base(pkg))
		cmd := exec.Command(filepath.Join(root, "hack", "golink.sh"), root, pkg, b.path)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("hack/golink.sh %s: %v\n%s", pkg, err, out)
		}
	})
	return b
}

// freeAddr returns a free loopback address no other caller got.
func freeAddr(t *testing.T) string { return testenv.FreeAddr(t) }

// syncBuffer is a goroutine-safe output sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// process is a command started in its own process group, so that a signal
// reaches it and every child it starts, like Ctrl-C in a terminal.
type process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan error
}

func start(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{cmd: cmd, out: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		if t.Failed() {
			t.Logf("output of %s:\n%s", cmd.Args[0], p.out.String())
		}
	})
	return p
}

// interrupt sends SIGINT to the process group and returns the exit error.
func (p *process) interrupt(t *testing.T, within time.Duration) error {
	t.Helper()
	if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err // let Cleanup's receive return
		return err
	case <-time.After(within):
		t.Fatalf("%s did not stop within %s after SIGINT", p.cmd.Args[0], within)
		return nil
	}
}

// eventually is testenv.Eventually that fails at once if the process exits.
func (p *process) eventually(t *testing.T, timeout time.Duration, fn func(context.Context) error) {
	t.Helper()
	testenv.Eventually(t, timeout, func(ctx context.Context) error {
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("%s exited (%v) while waiting:\n%s", p.cmd.Args[0], err, p.out.String())
		default:
		}
		return fn(ctx)
	})
}

// get200 succeeds when url answers 200.
func get200(url string) func(context.Context) error {
	return func(ctx context.Context) error { return childproc.Probe(ctx, url) }
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
