package helm

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/postrender"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// CapabilitiesTTL is how long the cluster's version and API list are reused.
const CapabilitiesTTL = 5 * time.Minute

// Client runs Helm actions against one cluster. It is safe for concurrent
// use; concurrent actions on the same release are the caller's to prevent.
type Client struct {
	getter    *restGetter
	clientset kubernetes.Interface
	log       func(format string, v ...any)
	// storageFor returns the release storage of a namespace, of a kind.
	// Tests swap in Helm's memory driver.
	storageFor func(namespace string, kind Storage) *storage.Storage
	kubeFor    func(namespace string, log func(string, ...any), g Guard) kube.Interface

	// secrets serves the release storage's reads from the metadata cache
	// and its own writes (see ReadReleasesFrom).
	secrets *secretCache
	// key signs the revisions written and checks those read (SignWith;
	// nil: none are).
	key SigningKey

	capsMu  sync.Mutex
	caps    *chartutil.Capabilities
	capsAt  time.Time
	capsFor func() (*chartutil.Capabilities, error)
}

// New returns a Client for the cluster cfg points at. log receives Helm's
// debug lines (nil discards them).
func New(cfg *rest.Config, log func(format string, v ...any)) (*Client, error) {
	g, err := newRESTGetter(cfg)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = func(string, ...any) {}
	}
	c := &Client{getter: g, clientset: cs, log: log, secrets: newSecretCache(nil, ManagedSecrets)}
	c.storageFor = func(ns string, kind Storage) *storage.Storage {
		return c.signed(newStorage(c.secrets.view(cs.CoreV1().Secrets(ns), ns), kind, log))
	}
	shared := newValidators()
	shared.serverValidates = func() bool {
		caps, err := c.capabilities()
		return err == nil && validatesFields(caps.KubeVersion)
	}
	c.kubeFor = func(ns string, log func(string, ...any), gd Guard) kube.Interface {
		kc := kube.New(g.inNamespace(ns).as(gd.As))
		kc.Factory = sharedValidatorFactory{Factory: kc.Factory, shared: shared}
		kc.Namespace = ns
		kc.Log = log
		return reachedClient{Client: kc, asReleased: gd.AsReleased, wrote: gd.Wrote, deleted: gd.Deleted, fresh: gd.fresh}
	}
	c.capsFor = c.discoverCapabilities
	return c, nil
}

// NewOffline returns a Client over one release storage and one kube client
// for every namespace, with Helm's default capabilities and no REST
// mapping: with Helm's memory driver and fake kube clients it runs the real
// actions without a cluster (state-machine tests).
func NewOffline(st *storage.Storage, kc kube.Interface) *Client {
	return &Client{
		log:        func(string, ...any) {},
		storageFor: func(string, Storage) *storage.Storage { return st },
		kubeFor:    func(string, func(string, ...any), Guard) kube.Interface { return kc },
		capsFor:    func() (*chartutil.Capabilities, error) { return chartutil.DefaultCapabilities, nil },
	}
}

// ReadReleasesFrom makes the release storage read through meta, a
// metadata-only cache of release Secrets (as the release engine's
// dependents cache), holding those scope says: Helm's queries of a
// release's history and its reads before each write are answered from it
// and from what the storage itself wrote, not by the API server (see
// secretCache). Call it before the first action.
func (c *Client) ReadReleasesFrom(meta client.Reader, scope SecretScope) {
	c.secrets = newSecretCache(meta, scope)
}

// Request describes the release an Install or Upgrade makes.
type Request struct {
	Name      string
	Namespace string
	Chart     *chart.Chart
	Values    chartutil.Values
	// Labels are stored on the release revision (its Secret's labels).
	Labels map[string]string
	// PostRenderer edits the rendered manifests before they are applied.
	PostRenderer postrender.PostRenderer
	// MaxHistory caps stored revisions (0: unlimited).
	MaxHistory int
	// Description is recorded in the revision.
	Description string
	// SkipCRDs: the chart's crds/ are not installed by Helm (chartkeeper
	// applies them itself, per the watch's crds policy).
	SkipCRDs bool
	Guard
}

// Guard is what an action that applies objects is given besides its
// release: both fields optional.
type Guard struct {
	// Admit is asked about every object the action creates or updates,
	// hooks included (see Admit).
	Admit Admit
	// Redact is applied to every log line Helm writes during the action
	// (Helm logs the errors of failed operations, which can quote values).
	Redact func(string) string
	// Timeout bounds the action, chart hooks included (see Bound); 0: no
	// bound.
	Timeout time.Duration
	// DisableHooks: the chart's hooks are not run (helm --no-hooks; install,
	// upgrade and uninstall).
	DisableHooks bool
	// Force: objects that cannot be patched are replaced (helm --force;
	// upgrade and rollback).
	Force bool
	// AsReleased, if set, reports objects of the release's current
	// revision known to be as it released them (nobody changed them
	// since): an upgrade or rollback patches those from the one manifest
	// to the other without reading them first (see reachedClient.Update).
	AsReleased func(ownership.Placement) bool
	// Wrote, if set, is given each of the release's objects the action
	// left as its manifest says, as the API server answered that write
	// (its UID, generation and resourceVersion right after it): what the
	// action itself made of it, unlike a later read, which may include
	// someone else's edit. Given: objects created, and objects patched by
	// a three-way merge with what was read, or without a read when known
	// as released (see patchObject). Not given: objects not written
	// (nothing to patch), custom resources merge-patched over a read,
	// hooks, and objects Helm's own code adopted or replaced.
	Wrote func(metav1.Object)
	// Deleted, if set, is given each object the action deleted (a hook's
	// too), with whether the API server's answer to its DELETE said it is
	// gone: deleted at once, or not found. One only marked for deletion
	// (finalizers to run, a Pod's graceful termination) is not gone yet.
	Deleted func(p ownership.Placement, gone bool)
	// As is the user the action's requests to the cluster impersonate
	// (a ServiceAccount's "system:serviceaccount:<ns>:<name>"): they can
	// do only what that user may. The release storage stays the
	// operator's. "": the operator's own identity. The chart's lookup
	// reads as this user too.
	As string
	// LookupCluster lets the chart's lookup read whatever As (or the
	// operator) may read, anywhere (watches.yaml lookup: Cluster). false,
	// the default: lookup reads only the release namespace (lookup.go).
	LookupCluster bool

	// fresh: the install creates its objects without reading them first
	// (see createFirst; Install sets it).
	fresh *createFirst
}

func (c *Client) config(ctx context.Context, ns string, maxHistory int, g Guard) (*action.Configuration, error) {
	caps, err := c.capabilities()
	if err != nil {
		return nil, err
	}
	log := c.log
	if g.Redact != nil {
		log = func(format string, v ...any) { c.log("%s", g.Redact(fmt.Sprintf(format, v...))) }
	}
	st := c.releases(ctx, ns)
	st.MaxHistory = maxHistory
	var getter action.RESTClientGetter
	if c.getter != nil {
		getter = renderGetter{restGetter: c.getter.inNamespace(ns).as(g.As), cluster: g.LookupCluster, log: log}
	}
	return &action.Configuration{
		RESTClientGetter: getter,
		Releases:         st,
		KubeClient:       withAdmit(c.kubeFor(ns, log, g), g.Admit),
		Capabilities:     caps,
		Log:              log,
	}, nil
}

// releases is the release storage of a namespace that an action writes
// through: every revision it writes is stamped (stamps.go).
func (c *Client) releases(ctx context.Context, ns string) *storage.Storage {
	st := c.storageFor(ns, storageOf(ctx))
	return &storage.Storage{Driver: stampingDriver{st.Driver}, MaxHistory: st.MaxHistory, Log: st.Log}
}

// Install installs a new release. Helm records a failed install as a
// revision with status failed; the returned error says what failed.
//
// It creates the release's objects without reading them first, and reads
// only those the API server says exist (see createFirst). That needs the
// release's objects to be the first manifest Helm builds: so only with
// SkipCRDs (the engine's way); otherwise Helm reads each object first.
func (c *Client) Install(ctx context.Context, r Request) (*release.Release, error) {
	if r.SkipCRDs {
		r.Guard.fresh = &createFirst{}
	}
	cfg, err := c.config(ctx, r.Namespace, r.MaxHistory, r.Guard)
	if err != nil {
		return nil, err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.Timeout = r.Name, r.Namespace, r.Timeout
	in.Labels, in.PostRenderer, in.Description = r.Labels, r.PostRenderer, r.Description
	in.DisableHooks, in.SkipCRDs = r.DisableHooks, r.SkipCRDs
	ctx, cancel := Bound(ctx, r.Timeout)
	defer cancel()
	rel, err := in.RunWithContext(ctx, r.Chart, r.Values)
	err = joinFlush(cfg, err)
	if refused := r.Guard.fresh.refusal(); refused != nil {
		return nil, ExplainAs(withdraw(cfg, rel, refused), r.As)
	}
	return rel, ExplainAs(c.explainTimeout(ctx, err, r.Timeout, r.Name, r.Namespace), r.As)
}

// withdraw removes the revision of an install refused on an object that is
// not the release's (see createFirst): Helm refuses it before it stores
// anything, so nothing is left stored here either. It returns Helm's
// error.
func withdraw(cfg *action.Configuration, rel *release.Release, refused error) error {
	//lint:ignore ST1005 Helm's own words, which users search for
	err := fmt.Errorf("Unable to continue with install: %w", refused)
	if rel == nil || rel.Version == 0 {
		return err
	}
	if _, derr := cfg.Releases.Delete(rel.Name, rel.Version); derr != nil && !errors.Is(derr, driver.ErrReleaseNotFound) {
		return errors.Join(err, fmt.Errorf("removing revision %d of the refused install: %w", rel.Version, derr))
	}
	return err
}

// Upgrade upgrades an existing release to the request's chart and values
// (the values replace the previous ones; nothing is reused).
func (c *Client) Upgrade(ctx context.Context, r Request) (*release.Release, error) {
	cfg, err := c.config(ctx, r.Namespace, r.MaxHistory, r.Guard)
	if err != nil {
		return nil, err
	}
	up := c.newUpgrade(cfg, r)
	ctx, cancel := Bound(ctx, r.Timeout)
	// Not canceled on return: Helm's upgrade watches the context in a
	// goroutine that, seeing it canceled before it has seen the upgrade
	// finish, marks the (successful) revision failed. See upgradeCancelDelay.
	defer time.AfterFunc(upgradeCancelDelay, cancel)
	rel, err := up.RunWithContext(ctx, r.Name, r.Chart, r.Values)
	return rel, ExplainAs(c.explainTimeout(ctx, joinFlush(cfg, err), r.Timeout, r.Name, r.Namespace), r.As)
}

// newUpgrade is Helm's upgrade action with the request's options (Upgrade
// runs it; Plan runs it dry).
func (c *Client) newUpgrade(cfg *action.Configuration, r Request) *action.Upgrade {
	up := action.NewUpgrade(cfg)
	up.Namespace, up.MaxHistory, up.Timeout = r.Namespace, r.MaxHistory, r.Timeout
	up.Labels, up.PostRenderer, up.Description = r.Labels, r.PostRenderer, r.Description
	up.DisableHooks, up.Force = r.DisableHooks, r.Force
	// Empty values must not make Helm copy the previous revision's.
	up.ResetValues = true
	return up
}

// Rollback rolls the release back to revision toRevision, as a new
// revision, under g (every object it re-applies is admitted, and
// g.Timeout bounds its hooks: Helm's rollback takes no context).
func (c *Client) Rollback(ctx context.Context, name, ns string, toRevision, maxHistory int, g Guard) error {
	cfg, err := c.config(ctx, ns, maxHistory, g)
	if err != nil {
		return err
	}
	rb := action.NewRollback(cfg)
	rb.Version, rb.MaxHistory, rb.Timeout, rb.Force = toRevision, maxHistory, g.Timeout, g.Force
	return ExplainAs(c.explainTimeout(ctx, joinFlush(cfg, rb.Run(name)), g.Timeout, name, ns), g.As)
}

// Uninstall removes the release's objects and its history. A release that
// does not exist is not an error. g.Timeout bounds its hooks (Helm's
// uninstall takes no context; 0: no bound); g.DisableHooks skips them;
// g.Deleted is told of each object deleted; g.Redact is applied to
// Helm's log lines.
func (c *Client) Uninstall(ctx context.Context, name, ns string, description string, g Guard) error {
	cfg, err := c.config(ctx, ns, 0, Guard{As: g.As, Deleted: g.Deleted, Redact: g.Redact, Admit: g.Admit})
	if err != nil {
		return err
	}
	timeout := g.Timeout
	un := action.NewUninstall(cfg)
	// Not IgnoreNotFound: Helm's would take any error reading the history
	// (a forged revision, *ForgedError; the API server's) for a release
	// gone, and report an uninstall that deleted nothing a success. A
	// release not found is told apart below.
	un.Description, un.Timeout, un.DisableHooks = description, timeout, g.DisableHooks
	_, err = un.Run(name)
	err = joinFlush(cfg, err)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}
	return ExplainAs(c.explainTimeout(ctx, err, timeout, name, ns), g.As)
}

// Unlock marks the latest revision failed if it is pending (left so by an
// interrupted install, upgrade or rollback) and returns it. It returns
// ErrNotLocked if the latest revision is not pending.
func (c *Client) Unlock(ctx context.Context, name, ns string) (*release.Release, error) {
	st := c.releases(ctx, ns)
	rel, err := st.Last(name)
	if err != nil {
		return nil, err
	}
	if !rel.Info.Status.IsPending() {
		return rel, ErrNotLocked
	}
	was := rel.Info.Status
	// The stamps keep what made it (LabelMadeBy): the description is for people.
	rel.SetStatus(release.StatusFailed, fmt.Sprintf("%s; left %s by an interrupted operation, marked failed by chartkeeper", rel.Info.Description, was))
	if err := st.Update(rel); err != nil {
		return nil, err
	}
	return rel, nil
}

// ErrNotLocked is returned by Unlock when there is nothing to unlock.
var ErrNotLocked = errors.New("release is not pending")

// Get returns revision version of a release (0: the latest).
func (c *Client) Get(ctx context.Context, name, ns string, version int) (*release.Release, error) {
	st := c.storageFor(ns, storageOf(ctx))
	if version == 0 {
		return st.Last(name)
	}
	return st.Get(name, version)
}

// History returns every stored revision of a release, oldest first.
func (c *Client) History(ctx context.Context, name, ns string) ([]*release.Release, error) {
	hist, err := c.storageFor(ns, storageOf(ctx)).History(name)
	if err != nil {
		return nil, err
	}
	sortByVersion(hist)
	return hist, nil
}

func sortByVersion(rs []*release.Release) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Version < rs[j].Version })
}

// IsNotFound reports whether err means the release does not exist.
func IsNotFound(err error) bool { return errors.Is(err, driver.ErrReleaseNotFound) }
