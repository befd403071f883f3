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
