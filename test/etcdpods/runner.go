package etcdpods

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/chartkeeper/chartkeeper/internal/etcdcluster"
)

// Runner runs one etcd process per EtcdCluster Pod. Zero values of the
// optional fields take the documented defaults.
type Runner struct {
	// Client reads Pods, PVCs, ConfigMaps and Secrets.
	Client kubernetes.Interface
	// EtcdBin and ChartkeeperBin are bin/etcd and bin/chartkeeper.
	EtcdBin, ChartkeeperBin string
	// Dir holds the members' data (by namespace and PVC UID) and logs.
	Dir string
	// Log receives one line per start, stop and failure (default: discard).
	Log io.Writer
	// Interval between passes (default 1 s).
	Interval time.Duration
	// Namespace confines the runner to the Pods of one namespace (a test's);
	// empty: every namespace.
	Namespace string

	procs map[string]*member
}

type member struct {
	podUID    types.UID
	cmd       *exec.Cmd
	done      chan struct{}
	failures  int
	nextStart time.Time
}

func (m *member) running() bool {
	if m.cmd == nil {
		return false
	}
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

// podSelector matches the Pods of charts/etcd-cluster.
const podSelector = "app.kubernetes.io/name=etcd,app.kubernetes.io/instance"

// Run keeps the processes in line with the Pods until ctx ends, then stops
// every process it started.
func (r *Runner) Run(ctx context.Context) error {
	if r.Interval <= 0 {
		r.Interval = time.Second
	}
	if r.Log == nil {
		r.Log = io.Discard
	}
	r.procs = map[string]*member{}
	defer r.stopAll()
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		if err := r.sync(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintf(r.Log, "etcd-pods: %v\n", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (r *Runner) sync(ctx context.Context) error {
	pods, err := r.Client.CoreV1().Pods(r.Namespace).List(ctx, metav1.ListOptions{LabelSelector: podSelector})
	if err != nil {
		return fmt.Errorf("listing Pods: %w", err)
	}
	seen := map[string]bool{}
	for i := range pods.Items {
		pod := &pods.Items[i]
		key := pod.Namespace + "/" + pod.Name
		if pod.DeletionTimestamp != nil || pod.Spec.NodeName == "" {
			continue
		}
		seen[key] = true
		m := r.procs[key]
		if m != nil && m.podUID != pod.UID {
			r.stop(key, "Pod recreated")
			m = nil
		}
		if m == nil {
			m = &member{podUID: pod.UID}
			r.procs[key] = m
		}
		if m.running() || time.Now().Before(m.nextStart) {
			continue
		}
		if m.cmd != nil { // it exited: back off like a kubelet
			m.failures++
			m.nextStart = time.Now().Add(min(time.Duration(m.failures)*time.Second, 10*time.Second))
			m.cmd = nil
			fmt.Fprintf(r.Log, "etcd-pods: %s exited; restarting in %s\n", key, time.Until(m.nextStart).Round(time.Second))
			continue
		}
		if err := r.start(ctx, pod, m); err != nil {
			m.failures++
			m.nextStart = time.Now().Add(min(time.Duration(m.failures)*time.Second, 10*time.Second))
			fmt.Fprintf(r.Log, "etcd-pods: %s: %v\n", key, err)
		}
	}
	for key := range r.procs {
		if !seen[key] {
			r.stop(key, "Pod gone")
		}
	}
	return nil
}

// start runs the restore init container if the Pod has one, then etcd.
func (r *Runner) start(ctx context.Context, pod *corev1.Pod, m *member) error {
	set := ownerSet(pod)
	if set == "" {
		return fmt.Errorf("not a StatefulSet Pod")
	}
	addr := etcdcluster.Loopback{Name: set, Namespace: pod.Namespace}
	ord := etcdcluster.MemberOrdinal(addr, pod.Name)
	if ord < 0 || ord >= etcdcluster.LoopbackOrdinals {
		return fmt.Errorf("ordinal of %s out of range", pod.Name)
	}
	pvcUID, err := r.volume(ctx, pod)
	if err != nil {
		return err
	}
	cm, err := r.Client.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, set+"-members", metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("member ConfigMap: %w", err)
	}
	initial, err := loopbackCluster(addr, cm.Data["ETCD_INITIAL_CLUSTER"])
	if err != nil {
		return err
	}
	state := cm.Data["ETCD_INITIAL_CLUSTER_STATE"]
	vol := filepath.Join(r.Dir, pod.Namespace, pvcUID)
	if err := os.MkdirAll(vol, 0o755); err != nil {
		return err
	}
	dataDir := filepath.Join(vol, "data")
	logPath := filepath.Join(r.Dir, pod.Namespace, pod.Name+".log")
	for _, c := range pod.Spec.InitContainers {
		if c.Name == "restore" {
			if err := r.restore(ctx, pod, c, addr, ord, dataDir, state, logPath); err != nil {
				return fmt.Errorf("restore init container: %w", err)
			}
		}
	}
	args := []string{
		"--name=" + pod.Name, "--data-dir=" + dataDir,
		"--listen-client-urls=" + addr.ClientURL(ord), "--advertise-client-urls=" + addr.ClientURL(ord),
		"--listen-peer-urls=" + addr.PeerURL(ord), "--initial-advertise-peer-urls=" + addr.PeerURL(ord),
		"--initial-cluster=" + initial, "--initial-cluster-state=" + state,
		"--initial-cluster-token=" + set + "." + pod.Namespace, "--log-level=warn",
	}
	cmd, err := r.exec(logPath, r.EtcdBin, args, nil)
	if err != nil {
		return err
	}
	m.cmd, m.done = cmd, make(chan struct{})
	go func(done chan struct{}) { _ = cmd.Wait(); close(done) }(m.done)
	fmt.Fprintf(r.Log, "etcd-pods: started %s/%s (pid %d) at %s, volume %s, state %s\n", pod.Namespace, pod.Name, cmd.Process.Pid, addr.ClientURL(ord), pvcUID, state)
	return nil
}

// restore runs the Pod's restore init container as bin/chartkeeper, with
// its data directory and peer URL on this machine.
func (r *Runner) restore(ctx context.Context, pod *corev1.Pod, c corev1.Container, addr etcdcluster.Loopback, ord int, dataDir, state, logPath string) error {
	var args []string
	for _, a := range c.Args {
		switch {
		case strings.HasPrefix(a, "--data-dir="):
			a = "--data-dir=" + dataDir
		case strings.HasPrefix(a, "--peer-url="):
			a = "--peer-url=" + addr.PeerURL(ord)
		case strings.HasPrefix(a, "--name="):
			a = "--name=" + pod.Name
		}
		args = append(args, a)
	}
	env := []string{"POD_NAME=" + pod.Name, "ETCD_INITIAL_CLUSTER_STATE=" + state}
	for _, e := range c.Env {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			continue
		}
		ref := e.ValueFrom.SecretKeyRef
		s, err := r.Client.CoreV1().Secrets(pod.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("env %s: %w", e.Name, err)
		}
		env = append(env, e.Name+"="+string(s.Data[ref.Key]))
	}
	cmd, err := r.exec(logPath, r.ChartkeeperBin, args, env)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		return fmt.Errorf("timed out")
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return ctx.Err()
	}
}

func (r *Runner) exec(logPath, bin string, args, env []string) (*exec.Cmd, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	fmt.Fprintf(logf, "\n=== %s %s %s\n", time.Now().Format(time.RFC3339), bin, strings.Join(args, " "))
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), env...)
	// The members die with the runner.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}

// volume returns the UID of the Pod's "data" claim.
func (r *Runner) volume(ctx context.Context, pod *corev1.Pod) (string, error) {
	for _, v := range pod.Spec.Volumes {
		if v.Name == "data" && v.PersistentVolumeClaim != nil {
			pvc, err := r.Client.CoreV1().PersistentVolumeClaims(pod.Namespace).Get(ctx, v.PersistentVolumeClaim.ClaimName, metav1.GetOptions{})
			if err != nil {
				return "", fmt.Errorf("volume claim: %w", err)
			}
			if pvc.DeletionTimestamp != nil {
				return "", fmt.Errorf("volume claim %s is being deleted", pvc.Name)
			}
			return string(pvc.UID), nil
		}
	}
	return "", fmt.Errorf("no data volume claim")
}

// loopbackCluster rewrites "name=peerURL,..." to the members' loopback
// peer URLs.
func loopbackCluster(addr etcdcluster.Loopback, initial string) (string, error) {
	var out []string
	for _, e := range strings.Split(initial, ",") {
		name, _, ok := strings.Cut(e, "=")
		ord := etcdcluster.MemberOrdinal(addr, name)
		if !ok || ord < 0 || ord >= etcdcluster.LoopbackOrdinals {
			return "", fmt.Errorf("ETCD_INITIAL_CLUSTER entry %q is not a member of %s", e, addr.Name)
		}
		out = append(out, name+"="+addr.PeerURL(ord))
	}
	return strings.Join(out, ","), nil
}

func ownerSet(pod *corev1.Pod) string {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "StatefulSet" {
			return o.Name
		}
	}
	return ""
}

func (r *Runner) stop(key, why string) { r.stopKeys([]string{key}, why) }

// stopAll stops every member at once: one by one, the last ones would wait
// out their election timeouts after losing quorum.
func (r *Runner) stopAll() {
	keys := make([]string, 0, len(r.procs))
	for key := range r.procs {
		keys = append(keys, key)
	}
	r.stopKeys(keys, "runner stopping")
}

// stopKeys sends SIGTERM to the members' processes, waits up to 10 s for
// them together, then SIGKILLs what is left.
func (r *Runner) stopKeys(keys []string, why string) {
	var ms []*member
	for _, key := range keys {
		m := r.procs[key]
		delete(r.procs, key)
		if m != nil && m.running() {
			_ = m.cmd.Process.Signal(syscall.SIGTERM)
			ms = append(ms, m)
		}
	}
	end := time.Now().Add(10 * time.Second)
	for _, m := range ms {
		select {
		case <-m.done:
		case <-time.After(time.Until(end)):
			_ = m.cmd.Process.Kill()
			<-m.done
		}
	}
	if len(ms) > 0 {
		fmt.Fprintf(r.Log, "etcd-pods: stopped %s (%s)\n", strings.Join(keys, ", "), why)
	}
}
