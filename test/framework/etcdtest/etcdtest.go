// Package etcdtest starts real etcd processes (bin/etcd, built by make
// tools) on 127.0.0.1 for tests of the etcd hooks. Every process a test
// starts is stopped when the test ends, and dies with the test binary.
package etcdtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// Binary returns the path of bin/etcd, failing the test when it is absent
// (skipping it under -short).
func Binary(t testing.TB) string {
	t.Helper()
	testenv.NeedsCluster(t)
	p := filepath.Join(testenv.BinDir(), "etcd")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("etcdtest: %v (run make tools)", err)
	}
	return p
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1 (testenv.FreePorts).
func FreePorts(t testing.TB, n int) []int { return testenv.FreePorts(t, n) }

// Config is one member's start-up configuration.
type Config struct {
	Name, DataDir       string
	ClientURL, PeerURL  string
	InitialCluster      string // name=peerURL,...
	InitialClusterState string // new or existing
	Token               string
}

// Proc is one running etcd process.
type Proc struct {
	Config
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts an etcd member; it is stopped at the end of the test. It
// does not wait for the member to serve.
func Start(t testing.TB, cfg Config) *Proc {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(cfg.DataDir), 0o755); err != nil {
		t.Fatal(err)
	}
	logPath := cfg.DataDir + ".log"
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(Binary(t),
		"--name="+cfg.Name, "--data-dir="+cfg.DataDir,
		"--listen-client-urls="+cfg.ClientURL, "--advertise-client-urls="+cfg.ClientURL,
		"--listen-peer-urls="+cfg.PeerURL, "--initial-advertise-peer-urls="+cfg.PeerURL,
		"--initial-cluster="+cfg.InitialCluster, "--initial-cluster-state="+cfg.InitialClusterState,
		"--initial-cluster-token="+cfg.Token, "--log-level=warn",
		"--heartbeat-interval=50", "--election-timeout=500")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("etcdtest: starting %s: %v", cfg.Name, err)
	}
	p := &Proc{Config: cfg, cmd: cmd, done: make(chan struct{})}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.Kill() })
	return p
}

// Running reports whether the process has not exited.
func (p *Proc) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop sends SIGTERM and waits (up to 10 s, then SIGKILL).
func (p *Proc) Stop() error {
	if !p.Running() {
		return nil
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return p.Kill()
	}
}

// Kill SIGKILLs the process and waits for it.
func (p *Proc) Kill() error {
	if !p.Running() {
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("etcd %s did not exit after SIGKILL", p.Name)
	}
}

// Log returns the member's log, for failure messages.
func (p *Proc) Log() string {
	b, _ := os.ReadFile(p.DataDir + ".log")
	return string(b)
}
