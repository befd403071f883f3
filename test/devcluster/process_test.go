package devcluster

import (
	"os/exec"
	"testing"
	"time"
)

func TestProcIdentityAndStop(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill() })

	p, err := identify(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("a running process reads as dead")
	}
	// The same PID with another start time is somebody else's process:
	// Stop must leave it alone.
	impostor := Proc{PID: p.PID, StartTime: p.StartTime + 1}
	if impostor.Alive() {
		t.Fatal("a PID with another start time reads as ours")
	}
	if err := impostor.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	if !p.Alive() {
		t.Fatal("Stop of an impostor record killed the real process")
	}
	if err := p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if p.Alive() {
		t.Fatal("process still alive after Stop")
	}
	if (Proc{}).Alive() {
		t.Error("the zero Proc reads as alive")
	}
}

func TestFillFreePortsDistinct(t *testing.T) {
	p := Ports{APIServer: 6443}
	if err := p.fillFree(); err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, port := range p.all() {
		if *port == 0 || seen[*port] {
			t.Fatalf("ports not filled with distinct values: %+v", p)
		}
		seen[*port] = true
	}
	if p.APIServer != 6443 {
		t.Errorf("a pinned port was replaced: %d", p.APIServer)
	}
}
