package helm

import (
	"context"
	"errors"
	"io"
	"testing"

	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// downAfterApply is a kube client after whose first write the API server
// is gone for the release storage (a process killed, or a control plane
// restarted, right after the objects were applied): Helm can no longer
// record the outcome.
type downAfterApply struct {
	kubefake.PrintingKubeClient
	storage *failingWrites
	armed   bool
}

func (k *downAfterApply) Create(r kube.ResourceList) (*kube.Result, error) {
	defer k.fall()
	return k.PrintingKubeClient.Create(r)
}

func (k *downAfterApply) Update(o, t kube.ResourceList, force bool) (*kube.Result, error) {
	defer k.fall()
	return k.PrintingKubeClient.Update(o, t, force)
}

func (k *downAfterApply) fall() { k.storage.down = k.armed }

// failingWrites is a memory driver whose writes fail once down. It stores
// copies, as a Secret does: Helm goes on to change the revision it wrote.
type failingWrites struct {
	*driver.Memory
	down bool
}

var errDown = errors.New("the API server is gone")

func (f *failingWrites) Create(key string, r *release.Release) error {
	if f.down {
		return errDown
	}
	return f.Memory.Create(key, stored(r))
}

func (f *failingWrites) Update(key string, r *release.Release) error {
	if f.down {
		return errDown
	}
	return f.Memory.Update(key, stored(r))
}

func stored(r *release.Release) *release.Release {
	c, info := *r, *r.Info
	c.Info = &info
	return &c
}

// Objects applied are never without a stored revision naming them: when
// the outcome cannot be recorded (the process killed or the API server
// gone right after the apply), the in-progress revision Helm wrote first
// is there, so the next action unlocks it and takes its manifest as what
// is live (a rollback's three-way merge starts from it). Found by make
// chaos: an upgrade held in memory and never written left a Service port
// live that no stored revision named, and every later upgrade and
// rollback added the old port next to it.
func TestAppliedObjectsOutliveALostOutcome(t *testing.T) {
	mem := &failingWrites{Memory: driver.NewMemory()}
	kc := &downAfterApply{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}, storage: mem}
	hc := NewOffline(storage.Init(newOneWriteDriver(mem)), kc)
	ctx := context.Background()
	req := Request{Name: "web", Namespace: "ns", Chart: appChart(false), Values: map[string]any{"v": "1"}}
	if _, err := hc.Install(ctx, req); err != nil { // the API server up
		t.Fatal(err)
	}
	kc.armed = true
	req.Values = map[string]any{"v": "2"}
	if _, err := hc.Upgrade(ctx, req); err == nil {
		t.Fatal("the upgrade's outcome could not be written, and it reported success")
	}
	got, err := mem.Memory.Get("sh.helm.release.v1.web.v2")
	if err != nil {
		t.Fatalf("the upgrade applied its objects and stored no revision 2: %v", err)
	}
	if got.Info.Status != release.StatusPendingUpgrade || got.Manifest == "" {
		t.Errorf("revision 2 stored as %s (manifest %d bytes), want pending-upgrade with its manifest, to be unlocked", got.Info.Status, len(got.Manifest))
	}
}
