package main

import (
	"maps"
	"testing"

	"github.com/chartkeeper/chartkeeper/test/devcluster"
)

func TestControlPlaneIsTheClustersPIDs(t *testing.T) {
	st := devcluster.State{Procs: map[string]devcluster.Proc{
		"etcd":           {PID: 101, StartTime: 5},
		"kube-apiserver": {PID: 102, StartTime: 6},
		"kwok":           {}, // never recorded a process
	}}
	want := map[string]int{"etcd": 101, "kube-apiserver": 102}
	if got := controlPlane(st); !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestNodesForRoomForEveryRollout(t *testing.T) {
	for _, c := range []struct{ n, want int }{{1, 3}, {100, 3}, {1000, 19}, {10000, 182}} {
		if got := nodesFor(c.n); got != c.want || got*podsPerNode < 2*c.n {
			t.Errorf("nodesFor(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
