package etcdcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/chartkeeper/chartkeeper/test/framework/etcdtest"
)

// loopback addresses ordinals on fixed ports of 127.0.0.1.
type loopback struct {
	name         string
	client, peer []int
}

func (l loopback) MemberName(i int) string { return fmt.Sprintf("%s-%d", l.name, i) }
func (l loopback) PeerURL(i int) string    { return fmt.Sprintf("http://127.0.0.1:%d", l.peer[i]) }
func (l loopback) ClientURL(i int) string  { return fmt.Sprintf("http://127.0.0.1:%d", l.client[i]) }

// world stands in for Kubernetes around real etcd processes: it renders a
// plan the way Helm and the StatefulSet controller would (Pods started
// and stopped by ordinal, rolled above the partition, volumes deleted on
// scale-down), and shows the result as an Observed.
type world struct {
	t        *testing.T
	dir      string
	addr     loopback
	procs    map[int]*etcdtest.Proc
	podVer   map[int]string // version each Pod runs
	volumes  map[int]string // PVC UID by ordinal
	down     map[int]bool   // Pods kept from running (a crash loop)
	nextVol  int
	set      *Set
	members  []int
	state    string
	recorded map[string]VolumeRecord
	plans    []Plan
	// applyErrs are the membership changes etcd refused (e.g. removing a
	// member within 5 s of another joining: "unhealthy cluster").
	applyErrs []error
}

const maxOrdinals = 8

func newWorld(t *testing.T) *world {
	ports := etcdtest.FreePorts(t, 2*maxOrdinals)
	return &world{t: t, dir: t.TempDir(), addr: loopback{name: "etcd", client: ports[:maxOrdinals], peer: ports[maxOrdinals:]},
		procs: map[int]*etcdtest.Proc{}, podVer: map[int]string{}, volumes: map[int]string{}, down: map[int]bool{}}
}

func (w *world) dataDir(i int) string {
	return filepath.Join(w.dir, fmt.Sprintf("%s-%s", w.addr.MemberName(i), w.volumes[i]))
}

// render applies a plan as Helm plus the StatefulSet controller would.
func (w *world) render(p Plan) {
	if w.set == nil {
		w.set = &Set{}
	}
	w.set.Replicas, w.set.Partition, w.set.Version = p.Replicas, p.Partition, p.Version
	w.members, w.state = p.Members, p.State
	w.sync()
}

// sync is one pass of the StatefulSet controller and the kubelet.
func (w *world) sync() {
	for i := range maxOrdinals {
		proc := w.procs[i]
		if i >= w.set.Replicas {
			if proc != nil {
				_ = proc.Stop()
				delete(w.procs, i)
			}
			delete(w.volumes, i) // persistentVolumeClaimRetentionPolicy.whenScaled: Delete
			delete(w.podVer, i)
			continue
		}
		if i >= w.set.Partition && w.podVer[i] != w.set.Version && proc != nil {
			_ = proc.Stop() // rolled to the update revision
			proc = nil
		}
		if proc != nil && proc.Running() || w.down[i] {
			continue
		}
		if _, ok := w.volumes[i]; !ok {
			w.nextVol++
			w.volumes[i] = fmt.Sprintf("uid-%d", w.nextVol)
		}
		if i >= w.set.Partition || w.podVer[i] == "" {
			w.podVer[i] = w.set.Version
		}
		w.procs[i] = etcdtest.Start(w.t, etcdtest.Config{
			Name: w.addr.MemberName(i), DataDir: w.dataDir(i), ClientURL: w.addr.ClientURL(i), PeerURL: w.addr.PeerURL(i),
			InitialCluster: w.initialCluster(), InitialClusterState: w.state, Token: "world",
		})
	}
}

func (w *world) initialCluster() string {
	var parts []string
	for _, i := range w.members {
		parts = append(parts, w.addr.MemberName(i)+"="+w.addr.PeerURL(i))
	}
	return strings.Join(parts, ",")
}

// loseVolume kills member i and replaces its volume with an empty one.
func (w *world) loseVolume(i int) {
	if p := w.procs[i]; p != nil {
		_ = p.Kill()
	}
	_ = os.RemoveAll(w.dataDir(i))
	w.nextVol++
	w.volumes[i] = fmt.Sprintf("uid-%d", w.nextVol)
}

// deleteVolume deletes ordinal i's claim and Pod: the next sync starts it
// on a new, empty volume.
func (w *world) deleteVolume(_ context.Context, i int) error {
	if p := w.procs[i]; p != nil {
		_ = p.Kill()
		delete(w.procs, i)
	}
	delete(w.volumes, i)
	return nil
}

func (w *world) endpoints() []string {
	var out []string
	for i := range maxOrdinals {
		if p := w.procs[i]; p != nil && p.Running() {
			out = append(out, w.addr.ClientURL(i))
		}
	}
	return out
}

// observe is what the hook would see.
func (w *world) observe(ctx context.Context, spec Spec) (Observed, Client) {
	o := Observed{Spec: spec, Volumes: w.recorded}
	if w.set == nil {
		return o, nil
	}
	set := *w.set
	set.Pods = make([]Pod, set.Replicas)
	for i := range set.Pods {
		p := w.procs[i]
		set.Pods[i] = Pod{Exists: p != nil, Updated: w.podVer[i] == set.Version, Volume: w.volumes[i],
			Ready: p != nil && p.Running() && ready(ctx, w.addr.ClientURL(i))}
	}
	o.Set = &set
	c, err := Dial(ctx, w.endpoints(), nil)
	if err != nil {
		o.Reach = err
		return o, nil
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	o.Members, o.Status, o.Reach = Survey(sctx, c)
	return o, c
}

// ready is the readiness probe: the member answers and sees a leader.
func ready(ctx context.Context, url string) bool {
	c, err := Dial(ctx, []string{url}, nil)
	if err != nil {
		return false
	}
	defer c.Close()
	return c.Status(ctx, url).Healthy()
}

// step observes, decides, applies the membership change and renders.
func (w *world) step(ctx context.Context, spec Spec) Plan {
	o, c := w.observe(ctx, spec)
	p := Decide(o, w.addr)
	if c != nil {
		defer c.Close()
		if err := Apply(ctx, c, w.addr, p, w.deleteVolume); err != nil {
			// As the hook does: report, render nothing, try again later.
			w.applyErrs = append(w.applyErrs, err)
			p.Phase, p.Message = PhaseHalted, err.Error()
			return p
		}
	}
	w.recorded = RecordVolumes(o, w.addr, w.recorded)
	w.plans = append(w.plans, p)
	w.render(p)
	return p
}

// converge steps until a plan is done and the spec holds, or fails the test.
func (w *world) converge(ctx context.Context, spec Spec, check func(Plan)) {
	w.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		p := w.step(ctx, spec)
		if check != nil {
			check(p)
		}
		if p.Done() && p.Replicas == spec.Size && p.Version == spec.Version && len(p.Members) == spec.Size {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.t.Fatalf("not converged to %+v; last plans: %+v", spec, w.plans[max(0, len(w.plans)-5):])
}

// kv is a client for data checks.
func (w *world) kv(t *testing.T) *clientv3.Client { return w.client(t, w.endpoints()) }

// kvOf is a client of the running members among ordinals.
func (w *world) kvOf(t *testing.T, ordinals []int) *clientv3.Client {
	var eps []string
	for _, i := range ordinals {
		if p := w.procs[i]; p != nil && p.Running() {
			eps = append(eps, w.addr.ClientURL(i))
		}
	}
	return w.client(t, eps)
}

func (w *world) client(t *testing.T, endpoints []string) *clientv3.Client {
	c, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
