package devcluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/chartkeeper/chartkeeper/test/framework/freeport"
)

// Ports are the loopback ports of the cluster's components; 0 means "pick a
// free one" when a cluster is created.
type Ports struct {
	Etcd              int `json:"etcd"`
	EtcdPeer          int `json:"etcdPeer"`
	EtcdMetrics       int `json:"etcdMetrics"`
	APIServer         int `json:"apiServer"`
	ControllerManager int `json:"controllerManager"`
	Scheduler         int `json:"scheduler"`
	Kwok              int `json:"kwok"`
}

func (p *Ports) all() []*int {
	return []*int{&p.Etcd, &p.EtcdPeer, &p.EtcdMetrics, &p.APIServer, &p.ControllerManager, &p.Scheduler, &p.Kwok}
}

// fillFree replaces every 0 port with a free loopback port (freeport: no
// two components, nor two clusters of one process, get the same one).
func (p *Ports) fillFree() error {
	var want []*int
	for _, port := range p.all() {
		if *port == 0 {
			want = append(want, port)
		}
	}
	free, err := freeport.Ports(len(want))
	if err != nil {
		return fmt.Errorf("finding free ports: %w", err)
	}
	for i, port := range want {
		*port = free[i]
	}
	return nil
}

// State is what state.json records about a cluster.
type State struct {
	Ports Ports `json:"ports"`
	// Procs maps component name to the process we started for it.
	Procs map[string]Proc `json:"procs"`
	// Nodes is the number of kwok nodes registered.
	Nodes int `json:"nodes"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// loadState reads state.json; a missing file yields an empty state and ok=false.
func loadState(dir string) (st State, ok bool, err error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, os.ErrNotExist) {
		return State{Procs: map[string]Proc{}}, false, nil
	}
	if err != nil {
		return st, false, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, false, fmt.Errorf("%s is corrupt (%v): stop any cluster processes by hand and remove the directory", statePath(dir), err)
	}
	if st.Procs == nil {
		st.Procs = map[string]Proc{}
	}
	return st, true, nil
}

// save writes state.json atomically.
func (s State) save(dir string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dir))
}
