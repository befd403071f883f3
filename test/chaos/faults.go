package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// FaultKind names a fault the harness injects.
type FaultKind string

// The faults, injected in turn (in a shuffled order per round).
const (
	KillMidInstall   FaultKind = "kill operator mid-install"
	KillMidUpgrade   FaultKind = "kill operator mid-upgrade"
	KillMidRollback  FaultKind = "kill operator mid-rollback"
	KillMidUninstall FaultKind = "kill operator mid-uninstall"
	RestartAPIServer FaultKind = "restart kube-apiserver"
	RestartEtcd      FaultKind = "restart etcd"
	DeleteObject     FaultKind = "delete a released object"
	EditObject       FaultKind = "edit a released object"
)

// Fault is one injected fault and what came of it.
type Fault struct {
	Kind FaultKind `json:"kind"`
	// At is the time since the faults began.
	At time.Duration `json:"at"`
	// Target is the custom resource or component hit.
	Target string `json:"target,omitempty"`
	// Injected: the fault happened (the operator was killed, the component
	// restarted, the object deleted or edited). A fault finds no target
	// sometimes (no resource in the state it needs): Detail says so.
	Injected bool `json:"injected"`
	// Caught: for a kill, the release was in the targeted state when the
	// operator died (AfterKill is it); for other faults, the same as Injected.
	Caught bool `json:"caught"`
	// AfterKill, for a kill, is the status of the release's latest revision
	// read right after the SIGKILL, before the next operator starts ("none"
	// without a revision): what the killed operation left behind.
	AfterKill string `json:"afterKill,omitempty"`
	// Detail says what was seen or why the fault was not injected.
	Detail string `json:"detail,omitempty"`
}

// catchTimeout bounds the wait for a release to reach the state a kill targets.
const catchTimeout = 20 * time.Second

// injector injects faults.
type injector struct {
	cfg     Config
	cs      kubernetes.Interface
	w       *workload
	op      *supervisor
	r       *rand.Rand
	started time.Time
}

func (in *injector) kinds() []FaultKind {
	ks := []FaultKind{KillMidInstall, KillMidUpgrade, KillMidRollback, KillMidUninstall, DeleteObject, EditObject}
	if in.cfg.Cluster != nil {
		ks = append(ks, RestartAPIServer, RestartEtcd)
	}
	return ks
}

// inject runs one fault of kind k.
func (in *injector) inject(ctx context.Context, k FaultKind) Fault {
	f := Fault{Kind: k, At: time.Since(in.started).Round(100 * time.Millisecond)}
	var err error
	switch k {
	case KillMidInstall, KillMidUpgrade, KillMidRollback, KillMidUninstall, DeleteObject, EditObject:
		// These need a resource in the right state: wait a little for one.
		for try := 0; try == 0 || errors.Is(err, errNoTarget) && try < 20 && sleep(ctx, 500*time.Millisecond); try++ {
			if k == DeleteObject || k == EditObject {
				err = in.tamper(ctx, k, &f)
			} else {
				err = in.killMid(ctx, k, &f)
			}
		}
	case RestartAPIServer:
		f.Target = "kube-apiserver"
		err = in.cfg.Cluster.Restart(ctx, "kube-apiserver", jitter(in.r, time.Second))
	case RestartEtcd:
		f.Target = "etcd"
		err = in.cfg.Cluster.Restart(ctx, "etcd", jitter(in.r, time.Second))
	}
	if err != nil {
		f.Injected, f.Caught, f.Detail = false, false, err.Error()
		return f
	}
	if k == RestartAPIServer || k == RestartEtcd {
		f.Injected, f.Caught = true, true
	}
	return f
}

// errNoTarget: no custom resource is in a state the fault needs.
var errNoTarget = errors.New("no custom resource to target")

// released returns a live slot whose latest revision is deployed.
func (in *injector) released(ctx context.Context) (*slot, error) {
	for range 2 * len(in.w.slots) {
		s := in.w.pick(in.r, true)
		if s == nil {
			break
		}
		if h, err := releaseHistory(ctx, in.cs, s.key); err == nil && h.LatestStatus == statusDeployed {
			return s, nil
		}
	}
	return nil, errNoTarget
}

// killMid provokes the operation k targets on one custom resource, waits
// for its release to show the pending state, and SIGKILLs the operator.
func (in *injector) killMid(ctx context.Context, k FaultKind, f *Fault) error {
	big := in.w.next(in.r, in.cfg.MaxConfigMaps)
	big.ConfigMaps = in.cfg.MaxConfigMaps // a large release stays pending longer
	// A release without hooks is recorded once, with its outcome: the hook
	// makes Helm write the pending state the kill waits for.
	big.Hook = true
	var s *slot
	var err error
	if k == KillMidInstall {
		if s = in.w.pick(in.r, false); s == nil || !in.w.gone(ctx, s) {
			return errNoTarget
		}
	} else if s, err = in.released(ctx); err != nil {
		return err
	}
	in.w.setBusy(s, true) // no spec change of the churn gets in between
	defer in.w.setBusy(s, false)
	var want string
	switch k {
	case KillMidInstall:
		want, err = statusPendingInstall, in.w.create(ctx, s, big)
	case KillMidUpgrade:
		want, err = statusPendingUpgrade, in.w.patch(ctx, s, big, "update")
	case KillMidRollback:
		big.Port = badPort
		want, err = statusPendingRollback, in.w.patch(ctx, s, big, "failing update")
	case KillMidUninstall:
		want, err = statusUninstalling, in.w.remove(ctx, s)
	}
	if err != nil {
		return err
	}
	f.Target = s.key.String()
	seen, err := in.await(ctx, s.key, want)
	down := jitter(in.r, time.Second)
	if !in.op.kill(down) {
		return fmt.Errorf("the operator was not running (%v)", err)
	}
	f.Injected = true
	f.AfterKill = statusNone
	if h, herr := releaseHistory(ctx, in.cs, s.key); herr != nil {
		f.AfterKill = "unknown: " + herr.Error()
	} else if h.Latest > 0 {
		f.AfterKill = h.LatestStatus
	}
	f.Caught = f.AfterKill == want
	switch {
	case f.Caught:
		f.Detail = "killed while " + want
	case seen:
		f.Detail = fmt.Sprintf("saw %s, but the kill left %s", want, f.AfterKill)
	default:
		f.Detail = fmt.Sprintf("killed without seeing %s within %s (%v); left %s", want, catchTimeout, err, f.AfterKill)
	}
	return nil
}

// await polls the release until its latest revision has status want.
func (in *injector) await(ctx context.Context, key types.NamespacedName, want string) (bool, error) {
	deadline := time.Now().Add(catchTimeout)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		h, err := releaseHistory(ctx, in.cs, key)
		if err == nil && h.LatestStatus == want {
			return true, nil
		}
		if err != nil {
			last = err
		} else {
			last = fmt.Errorf("last seen: revision %d %s", h.Latest, h.LatestStatus)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false, last
}

// tamper deletes or edits one released object of a deployed release.
func (in *injector) tamper(ctx context.Context, k FaultKind, f *Fault) error {
	s, err := in.released(ctx)
	if err != nil {
		return err
	}
	name := s.key.Name
	del := metav1.DeleteOptions{}
	if k == DeleteObject {
		if in.r.IntN(2) == 0 {
			f.Target = "Deployment " + s.key.String()
			err = in.cs.AppsV1().Deployments(s.key.Namespace).Delete(ctx, name, del)
		} else {
			f.Target = "ConfigMap " + s.key.Namespace + "/" + name + "-config"
			err = in.cs.CoreV1().ConfigMaps(s.key.Namespace).Delete(ctx, name+"-config", del)
		}
	} else {
		var patch []byte
		if in.r.IntN(2) == 0 {
			f.Target = "Deployment " + s.key.String() + " replicas"
			patch = []byte(`{"spec":{"replicas":3}}`)
			_, err = in.cs.AppsV1().Deployments(s.key.Namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		} else {
			f.Target = "ConfigMap " + s.key.Namespace + "/" + name + "-config data"
			patch = []byte(`{"data":{"data":"tampered"}}`)
			_, err = in.cs.CoreV1().ConfigMaps(s.key.Namespace).Patch(ctx, name+"-config", types.MergePatchType, patch, metav1.PatchOptions{})
		}
	}
	if apierrors.IsNotFound(err) {
		return errNoTarget // the release went between the look and the act
	}
	f.Injected, f.Caught = err == nil, err == nil
	return err
}
