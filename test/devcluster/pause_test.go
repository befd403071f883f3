package devcluster

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestPauseRefusesWhatIsNotRunning(t *testing.T) {
	c := &Cluster{state: State{Procs: map[string]Proc{}}}
	if err := c.Pause(context.Background(), "kube-proxy", time.Millisecond); err == nil || !strings.Contains(err.Error(), "no component") {
		t.Errorf("unknown component: %v", err)
	}
	if err := c.Pause(context.Background(), "etcd", time.Millisecond); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("a component not running: %v", err)
	}
}
