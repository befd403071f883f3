package etcdcluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// BackupAnnotation asks for a backup: every new value of it on an
// EtcdCluster takes one (kubectl annotate etcdcluster/x
// etcd.chartkeeper.dev/backup=$(date +%s) --overwrite).
const BackupAnnotation = "etcd.chartkeeper.dev/backup"

// ErrHalted: the spec asks for a change the cluster cannot safely take
// now (unhealthy members, no quorum, etcd unreachable, an unsupported
// version jump). The release is left as it is; the error names why.
var ErrHalted = errors.New("etcd cluster change halted")

// Hook is the EtcdCluster day-2 hook: a Translator that decides
// membership, rollout partition and version each reconcile (making the
// membership change through etcd first), and a PostRelease that takes
// backups and keeps status fresh. It must run after the TLS hook.
//
// Zero value: the etcd Go client, members addressed by their Pod DNS
// names, backups in S3, status refreshed every 30 s.
type Hook struct {
	// Dial connects to etcd (default Dial).
	Dial Dialer
	// Address names the members of a cluster (default PodDNS).
	Address func(name, namespace string, tls bool) Addressing
	// OpenStore opens a backup store (default: S3 with the credentials
	// Secret of the config, read from the cluster's namespace).
	OpenStore func(ctx context.Context, req hooks.Request, cfg S3Config) (Store, error)
	// RestoreImage runs `chartkeeper etcd-restore` in a restored cluster's
	// first Pod (default: the operator's own image).
	RestoreImage string
	// PollInterval is how often a healthy or unreachable cluster's status
	// is refreshed (default 30 s); changes in progress and unhealthy
	// members are followed every 2 s.
	PollInterval time.Duration
	// TempDir buffers snapshots before upload ("" for os.TempDir).
	TempDir string

	// secure remembers, by custom resource UID, whether Translate found
	// the release serving TLS, for the PostRelease that follows it.
	secure sync.Map
}

// The phases Hook implements, checked at compile time: hooks.Hook.Impl is
// an any, so a method whose signature drifted from its interface would
// otherwise be silently skipped.
var (
	_ hooks.Translator  = (*Hook)(nil)
	_ hooks.PostRelease = (*Hook)(nil)
	_ hooks.Permissions = (*Hook)(nil)
	_ hooks.ImageUser   = (*Hook)(nil)
)

// DefaultRestoreImage is the operator image, which carries the restore
// command.
var DefaultRestoreImage = "ghcr.io/chartkeeper/chartkeeper:latest"

const progressInterval = 2 * time.Second

func (h *Hook) dial() Dialer {
	if h.Dial != nil {
		return h.Dial
	}
	return Dial
}

func (h *Hook) address(name, ns string, tlsOn bool) Addressing {
	if h.Address != nil {
		return h.Address(name, ns, tlsOn)
	}
	return PodDNS{Name: name, Namespace: ns, TLS: tlsOn}
}

// Rules are the permissions the hook needs beyond the chart's objects.
// Images returns the restore init container's image (hooks.ImageUser).
func (h *Hook) Images() []string { return []string{h.restoreImage()} }

func (h *Hook) restoreImage() string {
	if h.RestoreImage != "" {
		return h.RestoreImage
	}
	return DefaultRestoreImage
}

// Rules are the API permissions of the hook (hooks.Permissions).
func (h *Hook) Rules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "delete"}},
		{APIGroups: []string{"apps"}, Resources: []string{"statefulsets"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"get"}},
	}
}

// cluster is one reconcile's view of a cluster.
type cluster struct {
	spec ClusterSpec
	addr Addressing
	obs  Observed
	c    Client
}

func (cl *cluster) Close() {
	if cl.c != nil {
		_ = cl.c.Close()
	}
}

func tlsOn(vals map[string]any) bool {
	t, _ := vals["tls"].(map[string]any)
	s, _ := t["serverSecret"].(string)
	return s != ""
}

// observe reads Kubernetes and etcd.
func (h *Hook) observe(ctx context.Context, req hooks.Request, vals map[string]any) (*cluster, error) {
	spec, err := specFrom(vals)
	if err != nil {
		return nil, err
	}
	ns, rel := req.ReleaseNamespace, req.ReleaseName
	secure := h.isSecure(req, vals)
	cl := &cluster{spec: spec, addr: h.address(setName(rel), ns, secure)}
	cl.obs = Observed{Spec: Spec{Size: spec.Size, Version: spec.Version, Restore: spec.Restore != nil}, Volumes: readApp(req.AppStatus).Volumes}
	if cl.obs.Set, err = observeSet(ctx, req.Client, ns, rel); err != nil || cl.obs.Set == nil {
		return cl, err
	}
	if cl.c, cl.obs.Reach = h.connect(ctx, req, cl.addr, secure, cl.obs.Set.Replicas); cl.obs.Reach != nil {
		return cl, nil
	}
	sctx, cancel := context.WithTimeout(ctx, 2*DialTimeout)
	defer cancel()
	cl.obs.Members, cl.obs.Status, cl.obs.Reach = Survey(sctx, cl.c)
	return cl, nil
}

// isSecure reports whether the release serves TLS: from the TLS hook's
// values when Translate has them, else as the last Translate found.
func (h *Hook) isSecure(req hooks.Request, vals map[string]any) bool {
	if _, ok := vals["tls"]; ok {
		secure := tlsOn(vals)
		h.secure.Store(req.Object.GetUID(), secure)
		return secure
	}
	v, _ := h.secure.Load(req.Object.GetUID())
	secure, _ := v.(bool)
	return secure
}

// connect dials the client URLs of the first n members.
func (h *Hook) connect(ctx context.Context, req hooks.Request, addr Addressing, secure bool, n int) (Client, error) {
	var tc *tls.Config
	if secure && strings.HasPrefix(addr.ClientURL(0), "https://") {
		var err error
		if tc, err = clientTLS(ctx, req.Client, req.ReleaseNamespace, req.ReleaseName); err != nil {
			return nil, err
		}
	}
	eps := make([]string, 0, n)
	for i := range max(n, 1) {
		eps = append(eps, addr.ClientURL(i))
	}
	return h.dial()(ctx, eps, tc)
}

// Translate implements hooks.Translator: it decides the next step, makes
// its membership change through etcd, records status.app and renders
// version and membership into the values. A halted change is returned as
// ErrHalted after the status is written.
func (h *Hook) Translate(ctx context.Context, req hooks.Request, vals chartutil.Values) (chartutil.Values, error) {
	if req.Object.GetDeletionTimestamp() != nil {
		return vals, nil
	}
	cl, err := h.observe(ctx, req, vals)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	p := Decide(cl.obs, cl.addr)
	if p.Action.Kind != ActionNone {
		if err := Apply(ctx, cl.c, cl.addr, p, deleteVolume(req.Client, req.ReleaseNamespace, req.ReleaseName)); err != nil {
			// etcd refuses e.g. a removal within 5 s of a member joining:
			// render nothing new and try again shortly.
			msg := fmt.Sprintf("%s; etcd refused it for now: %v", p.Message, err)
			p = Hold(cl.obs, cl.addr)
			p.Phase, p.Message = PhaseScaling, msg
		} else {
			req.Log.Info("membership changed", "action", p.Action.Kind, "member", cl.addr.MemberName(p.Action.Ordinal))
		}
	}
	st := readApp(req.AppStatus)
	describe(&st, cl.obs, cl.addr, p)
	st.Volumes = RecordVolumes(cl.obs, cl.addr, st.Volumes)
	writeApp(req.AppStatus, st)
	if p.Blocked {
		return nil, fmt.Errorf("%w: %s", ErrHalted, p.Message)
	}
	return h.render(vals, cl, p), nil
}

// render writes the plan into the chart's values.
func (h *Hook) render(vals chartutil.Values, cl *cluster, p Plan) chartutil.Values {
	members := make([]any, len(p.Members))
	for i, m := range p.Members {
		members[i] = m
	}
	vals["version"] = p.Version
	m := map[string]any{"replicas": p.Replicas, "partition": p.Partition, "members": members, "state": p.State}
	if cl.spec.Restore != nil {
		cfg, _ := cl.spec.restoreStore()
		m["restore"] = map[string]any{"image": h.restoreImage(), "s3": s3Values(cfg)}
	}
	vals["membership"] = m
	return vals
}

func s3Values(c S3Config) map[string]any {
	return map[string]any{"endpoint": c.Endpoint, "bucket": c.Bucket, "prefix": c.Prefix, "region": c.Region,
		"insecure": c.Insecure, "credentialsSecret": c.CredentialsSecret}
}

// PostRelease implements hooks.PostRelease: it takes a backup when one is
// requested or due, and asks to be called again while a change is in
// progress (every 2 s), for the next backup, and to refresh status.
func (h *Hook) PostRelease(ctx context.Context, req hooks.Request, _ hooks.Release) (hooks.Result, error) {
	st := readApp(req.AppStatus)
	poll := h.PollInterval
	if poll <= 0 {
		poll = 30 * time.Second
	}
	res := hooks.Result{RequeueAfter: poll}
	// Follow a change in progress, or members not (yet) healthy, closely.
	if !(Plan{Phase: st.Phase}).Done() || st.Health == "Degraded" || st.Health == "Unavailable" {
		res.RequeueAfter = progressInterval
	}
	vals, _, _ := unstructured.NestedMap(req.Object.Object, "spec")
	spec, err := specFrom(vals)
	if err != nil || spec.Backup == nil {
		return res, err
	}
	next, err := h.backupIfDue(ctx, req, spec, &st)
	writeApp(req.AppStatus, st)
	if !next.IsZero() {
		if d := next.Sub(req.Now()); d < res.RequeueAfter {
			res.RequeueAfter = max(d, time.Second)
		}
	}
	return res, err
}

// backupIfDue takes a backup when the annotation has a new value or the
// schedule says so, and returns when the schedule next wants one.
func (h *Hook) backupIfDue(ctx context.Context, req hooks.Request, spec ClusterSpec, st *AppStatus) (time.Time, error) {
	now := req.Now()
	var trigger string
	if v := req.Object.GetAnnotations()[BackupAnnotation]; v != "" && v != st.BackupRequest {
		trigger = "request " + v
	}
	var next time.Time
	if spec.Backup.Schedule != "" {
		sched, err := ParseSchedule(spec.Backup.Schedule)
		if err != nil {
			return next, err
		}
		last, _ := time.Parse(time.RFC3339, st.LastScheduledBackup)
		due := false
		if next, due = NextBackup(sched, last, req.Object.GetCreationTimestamp().Time, now); due && trigger == "" {
			trigger = "schedule"
		}
	}
	if trigger == "" {
		return next, nil
	}
	if st.Health != "Healthy" && st.Health != "Degraded" {
		st.BackupError = fmt.Sprintf("backup (%s) waits: cluster health is %s", trigger, st.Health)
		return now.Add(progressInterval), nil
	}
	rec, err := h.backup(ctx, req, spec, now)
	if err != nil {
		st.BackupError = err.Error()
		return next, fmt.Errorf("backup (%s): %w", trigger, err)
	}
	rec.Trigger = trigger
	st.LastBackup, st.BackupError = &rec, ""
	if trigger == "schedule" {
		st.LastScheduledBackup = now.UTC().Format(time.RFC3339)
		sched, _ := ParseSchedule(spec.Backup.Schedule)
		next, _ = NextBackup(sched, now, now, now)
	} else {
		st.BackupRequest = req.Object.GetAnnotations()[BackupAnnotation]
	}
	req.Log.Info("backup taken", "key", rec.Key, "size", rec.Size, "revision", rec.Revision, "trigger", trigger)
	return next, nil
}

func (h *Hook) backup(ctx context.Context, req hooks.Request, spec ClusterSpec, now time.Time) (BackupRecord, error) {
	// Translate has just read the cluster this step: dial the members it
	// listed, without reading Kubernetes again.
	secure := h.isSecure(req, nil)
	c, err := h.connect(ctx, req, h.address(setName(req.ReleaseName), req.ReleaseNamespace, secure), secure, len(readApp(req.AppStatus).Members))
	if err != nil {
		return BackupRecord{}, fmt.Errorf("etcd does not answer: %w", err)
	}
	defer c.Close()
	store, err := h.openStore(ctx, req, spec.Backup.S3)
	if err != nil {
		return BackupRecord{}, err
	}
	key := BackupKey(req.ReleaseNamespace, req.Object.GetName(), now)
	rec, err := TakeBackup(ctx, c, store, key, h.tempDir(), now)
	if err != nil {
		return rec, err
	}
	if deleted, err := Prune(ctx, store, backupPrefix(req.ReleaseNamespace, req.Object.GetName()), spec.Backup.Keep); err != nil {
		req.Log.Error(err, "pruning old backups")
	} else if len(deleted) > 0 {
		req.Log.Info("old backups deleted", "keys", deleted)
	}
	return rec, nil
}

func (h *Hook) tempDir() string {
	if h.TempDir != "" {
		return h.TempDir
	}
	return os.TempDir()
}

func (h *Hook) openStore(ctx context.Context, req hooks.Request, cfg S3Config) (Store, error) {
	if h.OpenStore != nil {
		return h.OpenStore(ctx, req, cfg)
	}
	ak, sk, err := s3Credentials(ctx, req.Client, req.ReleaseNamespace, cfg.CredentialsSecret)
	if err != nil {
		return nil, err
	}
	return NewS3Store(cfg, ak, sk)
}
