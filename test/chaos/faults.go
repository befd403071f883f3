package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
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
	KillMidUnlock    FaultKind = "kill operator mid-unlock"
	KillMidDrift     FaultKind = "kill operator mid-drift-correction"
	KillMidHook      FaultKind = "kill operator mid-hook"
	RestartAPIServer FaultKind = "restart kube-apiserver"
	RestartEtcd      FaultKind = "restart etcd"
	PauseAPIServer   FaultKind = "pause kube-apiserver"
	PauseEtcd        FaultKind = "pause etcd"
	DeleteObject     FaultKind = "delete a released object"
	EditObject       FaultKind = "edit a released object"
)

// ClassicFaults are the faults of the short run (make test).
func ClassicFaults() []FaultKind {
	return []FaultKind{KillMidInstall, KillMidUpgrade, KillMidRollback, KillMidUninstall, RestartAPIServer, RestartEtcd, DeleteObject, EditObject}
}

// AllFaults are every fault the harness knows (make chaos).
func AllFaults() []FaultKind {
	return append(ClassicFaults(), KillMidUnlock, KillMidDrift, KillMidHook, PauseAPIServer, PauseEtcd)
}

// isKill: the fault SIGKILLs the operator.
func isKill(k FaultKind) bool {
	switch k {
	case KillMidInstall, KillMidUpgrade, KillMidRollback, KillMidUninstall, KillMidUnlock, KillMidDrift, KillMidHook:
		return true
	}
	return false
}

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

// catchTimeout is the default bound of the wait for a release to reach the
// state a kill targets.
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

// round returns one round of faults: each configured kind the cluster
// allows once, each kill KillWeight times.
func (in *injector) round() []FaultKind {
	var ks []FaultKind
	_, canPause := in.cfg.Cluster.(Pauser)
	for _, k := range in.cfg.Faults {
		switch {
		case (k == RestartAPIServer || k == RestartEtcd) && in.cfg.Cluster == nil:
		case (k == PauseAPIServer || k == PauseEtcd) && !canPause:
		case isKill(k):
			for range in.cfg.KillWeight {
				ks = append(ks, k)
			}
		default:
			ks = append(ks, k)
		}
	}
	return ks
}

// inject runs one fault of kind k. It returns the fault, preceded by any
// other it needed (a kill mid-unlock first leaves a revision pending with a
// kill mid-upgrade).
func (in *injector) inject(ctx context.Context, k FaultKind) []Fault {
	f := Fault{Kind: k, At: in.now()}
	var before []Fault
	var err error
	switch k {
	case RestartAPIServer, RestartEtcd:
		f.Target = component(k)
		err = in.cfg.Cluster.Restart(ctx, f.Target, jitter(in.r, time.Second))
		f.Injected, f.Caught = err == nil, err == nil
	case PauseAPIServer, PauseEtcd:
		f.Target = component(k)
		d := jitter(in.r, in.cfg.PauseFor)
		f.Detail = fmt.Sprintf("frozen %.1fs", d.Seconds())
		err = in.cfg.Cluster.(Pauser).Pause(ctx, f.Target, d)
		f.Injected, f.Caught = err == nil, err == nil
	default:
		if isKill(k) {
			// A kill needs a leader to act on the change it provokes.
			in.op.leading(ctx, time.Minute)
		}
		// These need a resource in the right state: wait a little for one.
		for try := 0; try == 0 || errors.Is(err, errNoTarget) && try < 20 && sleep(ctx, 500*time.Millisecond); try++ {
			switch k {
			case DeleteObject, EditObject:
				err = in.tamper(ctx, k, &f)
			case KillMidUnlock:
				before, err = in.killMidUnlock(ctx, &f)
			case KillMidDrift:
				err = in.killMidDrift(ctx, &f)
			case KillMidHook:
				err = in.killMidHook(ctx, &f)
			case KillMidUninstall:
				err = in.killMidUninstall(ctx, &f)
			default:
				err = in.killMid(ctx, k, &f)
			}
		}
	}
	if err != nil {
		f.Injected, f.Caught = false, false
		f.Detail = strings.TrimPrefix(f.Detail+"; "+err.Error(), "; ")
	}
	return append(before, f)
}

func (in *injector) now() time.Duration { return time.Since(in.started).Round(100 * time.Millisecond) }

// component is the control-plane component a restart or pause hits.
func component(k FaultKind) string {
	if k == RestartEtcd || k == PauseEtcd {
		return "etcd"
	}
	return "kube-apiserver"
}

// errNoTarget: no custom resource is in a state the fault needs.
var errNoTarget = errors.New("no custom resource to target")

// released returns a live slot whose latest revision is deployed.
func (in *injector) released(ctx context.Context) (*slot, error) {
	return in.releasedWhere(ctx, func(*slot) bool { return true })
}

// releasedWhere returns a live slot satisfying ok whose latest revision is
// deployed.
func (in *injector) releasedWhere(ctx context.Context, ok func(*slot) bool) (*slot, error) {
	for range 2 * len(in.w.slots) {
		s := in.w.pickWhere(in.r, func(s *slot) bool { return s.live && ok(s) })
		if s == nil {
			break
		}
		if h, err := releaseHistory(ctx, in.cs, s.key); err == nil && h.LatestStatus == statusDeployed {
			return s, nil
		}
	}
	return nil, errNoTarget
}

// vacated returns a slot whose custom resource is gone from the API, so
// that creating it installs a new release. When there is none (the churn
// deletes only while more than half are live), it deletes a released one
// and waits, up to CatchTimeout, for its uninstall to let it go. The slot
// is left busy: the caller frees it.
func (in *injector) vacated(ctx context.Context) (*slot, error) {
	if s := in.w.pick(in.r, false); s != nil && in.w.gone(ctx, s) {
		in.w.setBusy(s, true)
		return s, nil
	}
	s, err := in.released(ctx)
	if err != nil {
		return nil, err
	}
	in.w.setBusy(s, true)
	if err := in.w.remove(ctx, s); err != nil {
		in.w.setBusy(s, false)
		return nil, err
	}
	for deadline := time.Now().Add(in.cfg.CatchTimeout); !in.w.gone(ctx, s); {
		if time.Now().After(deadline) || !sleep(ctx, 250*time.Millisecond) {
			in.w.setBusy(s, false)
			return nil, errNoTarget
		}
	}
	return s, nil
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
	switch k {
	case KillMidInstall:
		s, err = in.vacated(ctx)
	default:
		s, err = in.released(ctx)
	}
	if err != nil {
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
	}
	if err != nil {
		return err
	}
	f.Target = s.key.String()
	seen, err := in.await(ctx, s.key, want)
	if kerr := in.kill(ctx, f, s.key); kerr != nil {
		return fmt.Errorf("%w (%v)", kerr, err)
	}
	f.Caught = f.AfterKill == want
	switch {
	case f.Caught:
		f.Detail = "killed while " + want
	case seen:
		f.Detail = fmt.Sprintf("saw %s, but the kill left %s", want, f.AfterKill)
	default:
		f.Detail = fmt.Sprintf("killed without seeing %s within %s (%v); left %s", want, in.cfg.CatchTimeout, err, f.AfterKill)
	}
	return nil
}

// kill SIGKILLs the operator, holds it down a while, and records in f
// the status of key's latest revision right after ("none" without one).
func (in *injector) kill(ctx context.Context, f *Fault, key types.NamespacedName) error {
	if !in.op.kill(jitter(in.r, time.Second)) {
		return errors.New("the operator was not running")
	}
	f.Injected = true
	f.AfterKill = statusNone
	if h, err := releaseHistory(ctx, in.cs, key); err != nil {
		f.AfterKill = "unknown: " + err.Error()
	} else if h.Latest > 0 {
		f.AfterKill = h.LatestStatus
	}
	return nil
}

// await polls the release until its latest revision has status want.
func (in *injector) await(ctx context.Context, key types.NamespacedName, want string) (bool, error) {
	deadline := time.Now().Add(in.cfg.CatchTimeout)
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
		if s.kind.kept && in.r.IntN(3) == 0 {
			// A kept object is released too: an edit of it is drift.
			f.Target = "ConfigMap " + s.key.Namespace + "/" + name + keptSuffix + " data (kept)"
			patch = []byte(`{"data":{"clusterID":"tampered"}}`)
			_, err = in.cs.CoreV1().ConfigMaps(s.key.Namespace).Patch(ctx, name+keptSuffix, types.MergePatchType, patch, metav1.PatchOptions{})
		} else if in.r.IntN(2) == 0 {
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
