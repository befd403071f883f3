package helm

import (
	"context"
	"maps"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/intern"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
)

// secretCache serves the release storage's reads without asking the API
// server, where it can tell what the server would answer.
//
// Helm reads a release's whole history at the start of every action (a
// LIST of its Secrets by label, twice with the storage switch) and GETs
// each revision again before it updates or deletes it: 20 of the 60
// requests an install, upgrade and delete cost per custom resource (make
// bench). Yet the operator already holds the metadata of every release
// Secret it manages (the label-scoped metadata cache), and it wrote most
// of those Secrets itself.
//
// So the cache keeps the Secrets the storage wrote or read, each with its
// resourceVersion, and answers a read from them when the metadata cache
// shows the same resourceVersion (or has not caught up with a write made
// here yet: a newer one here than there). A Secret the metadata cache shows
// at a version this cache does not hold is read from the API server, as is
// anything when the metadata cache holds nothing for a release (a release
// made outside chartkeeper lacks the label that cache selects; a LIST that
// finds nothing is remembered until the next write, see absent).
// Selectors that do not name a release go to the API server. When the
// metadata cache holds every Helm release Secret (EveryReleaseSecret), not
// only chartkeeper's, a release it does not show does not exist: nothing is
// asked of the API server before an install.
type secretCache struct {
	// meta is the metadata cache of release Secrets (nil: every read is live).
	meta  client.Reader
	scope SecretScope
	now   func() time.Time

	mu      sync.Mutex
	secrets map[string]*cachedSecret // namespace/name
	// byRelease: the keys of secrets by namespace/release (their name
	// label), so that a release's are found without a look at every
	// release's (at 10,000 releases a scan per read was the storage's
	// largest cost).
	byRelease map[string][]string
	// absent: a live LIST found no Secret of namespace/release, at this time;
	// forgotten on the next write of that release here.
	absent map[string]time.Time
	writes int
}

// cachedSecret is a Secret as the storage last wrote or read it: its
// metadata (without managedFields) and type in meta and labels, its data
// packed.
type cachedSecret struct {
	meta   *secretMeta // nil once deleted here
	data   packedData
	labels map[string]string
	rv     uint64
	at     time.Time // when it was written, read or deleted here
	// seen: the metadata cache has shown this version.
	seen bool
}

// absentTTL bounds how long a live LIST that found no release is believed
// (a helm CLI install could come after it).
const absentTTL = 30 * time.Second

// forgetAfter is how long a deleted Secret's tombstone is kept.
const forgetAfter = 5 * time.Minute

// cacheLag is how long a Secret written here may be missing from the
// metadata cache before the cache's word is taken over this copy (the
// cache shows a write within a second or so; a Secret never shown there,
// as one without the managed label, is read from the API server).
const cacheLag = 10 * time.Second

func newSecretCache(meta client.Reader, scope SecretScope) *secretCache {
	return &secretCache{meta: meta, scope: scope, now: time.Now, secrets: map[string]*cachedSecret{},
		byRelease: map[string][]string{}, absent: map[string]time.Time{}}
}

// speaksFor reports whether the caches can tell that release rel has no
// Secret in ns: the metadata cache holds every release's, or it (or what
// was written here) holds some of rel's, or a live LIST just found none.
func (v *cachedSecrets) speaksFor(ctx context.Context, rel string) bool {
	return v.c.scope == EveryReleaseSecret || v.c.knownAbsent(v.ns, rel) || v.knows(ctx, rel)
}

// view returns the release storage's Secret client for a namespace:
// reads through the cache, writes to live (and remembered).
func (c *secretCache) view(live clientcorev1.SecretInterface, ns string) clientcorev1.SecretInterface {
	if c == nil || c.meta == nil {
		return live
	}
	return &cachedSecrets{SecretInterface: live, c: c, ns: ns}
}

// metadataView is view for a reader of the Secrets' metadata only: what
// the cache answers comes without data (no payload is unpacked for it).
func (c *secretCache) metadataView(live clientcorev1.SecretInterface, ns string) clientcorev1.SecretInterface {
	if v, ok := c.view(live, ns).(*cachedSecrets); ok {
		v.withoutData = true
		return v
	}
	return live
}

type cachedSecrets struct {
	clientcorev1.SecretInterface
	c  *secretCache
	ns string
	// withoutData: answers from the cache carry no data (metadataView).
	withoutData bool
}

func parseRV(s string) (uint64, bool) {
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// remember stores a Secret as the API server returned it.
func (c *secretCache) remember(s *corev1.Secret) {
	rv, ok := parseRV(s.ResourceVersion)
	var data packedData
	if ok {
		data = pack(s.Data) // before the lock: it may decompress the payload
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := s.Namespace + "/" + s.Name
	if !ok {
		c.drop(key)
		return
	}
	// Its labels are those of the metadata cache's copy (package intern).
	l := intern.Default.Map(maps.Clone(s.Labels))
	c.put(key, &cachedSecret{meta: keepMeta(s, l), data: data, labels: l, rv: rv, at: c.now()})
	if rel := s.Labels["name"]; rel != "" {
		delete(c.absent, s.Namespace+"/"+rel)
	}
	c.sweep()
}

// sweep drops old tombstones now and then (with c.mu held).
func (c *secretCache) sweep() {
	c.writes++
	if c.writes%256 != 0 {
		return
	}
	now := c.now()
	for k, e := range c.secrets {
		if e.meta == nil && now.Sub(e.at) > forgetAfter {
			c.drop(k)
		}
	}
	for k, at := range c.absent {
		if now.Sub(at) > absentTTL {
			delete(c.absent, k)
		}
	}
}

// resolve returns the Secret ns/name as the API server holds it (a copy
// the caller owns; nil: it is gone), given the metadata cache's
// resourceVersion of it (shown false: the metadata cache has no such
// Secret). ok is false when only the API server can tell.
func (c *secretCache) resolve(ns, name string, cacheRV uint64, shown, withData bool) (*corev1.Secret, bool) {
	c.mu.Lock()
	e := c.secrets[ns+"/"+name]
	m, ok := c.lookup(e, cacheRV, shown)
	if m == nil {
		c.mu.Unlock()
		return nil, ok
	}
	s, data := m.secret(ns, name, e.labels, e.rv), e.data
	c.mu.Unlock()
	if !withData {
		return s, true
	}
	// After the lock: the payload may decompress. Packed data is never
	// changed, only replaced.
	d, err := data.unpack()
	if err != nil {
		return nil, false // the API server answers
	}
	s.Data = d
	return s, true
}

// lookup is resolve's choice (with c.mu held): the entry's metadata (nil:
// gone) and whether it answers.
func (c *secretCache) lookup(e *cachedSecret, cacheRV uint64, shown bool) (*secretMeta, bool) {
	switch {
	case e == nil:
		return nil, false
	case !shown && e.meta == nil:
		return nil, true // deleted here
	case !shown && !e.seen && c.now().Sub(e.at) < cacheLag:
		return e.meta, true // written here, the metadata cache lags
	case !shown:
		return nil, false // gone, or never in the metadata cache: ask
	case cacheRV == e.rv && e.meta != nil:
		e.seen = true
		return e.meta, true
	case cacheRV <= e.rv:
		// The metadata cache has not caught up with a write (or delete) here.
		return e.meta, true
	}
	return nil, false // someone else wrote it since
}

func (v *cachedSecrets) Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	var cacheRV uint64
	shown := false
	switch err := v.c.meta.Get(ctx, client.ObjectKey{Namespace: v.ns, Name: name}, m); {
	case err == nil:
		rv, ok := parseRV(m.ResourceVersion)
		if !ok {
			return v.liveGet(ctx, name, opts)
		}
		cacheRV, shown = rv, true
	case !apierrors.IsNotFound(err):
		return v.liveGet(ctx, name, opts)
	}
	notFound := apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
	if s, ok := v.c.resolve(v.ns, name, cacheRV, shown, !v.withoutData); ok {
		if s == nil {
			return nil, notFound
		}
		return s, nil
	}
	if !shown {
		// A revision not stored yet (Helm's check before it writes the next
		// one): the caches speak for a release they know, or know absent.
		if rel, _, named := revisionKey(name); named && v.speaksFor(ctx, rel) && !v.c.has(v.ns, name) {
			return nil, notFound
		}
	}
	return v.liveGet(ctx, name, opts)
}

// has reports whether the cache holds an entry (or tombstone) for ns/name.
func (c *secretCache) has(ns, name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.secrets[ns+"/"+name]
	return ok
}

func (v *cachedSecrets) liveGet(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error) {
	metrics.StorageRead("get")
	s, err := v.SecretInterface.Get(ctx, name, opts)
	switch {
	case err == nil:
		v.c.remember(s)
	case apierrors.IsNotFound(err):
		v.c.forget(v.ns, name)
	}
	return s, err
}

// List answers a selector naming one release (Helm's queries: owner=helm,
// name=..., maybe status=...) from the caches; any other goes live.
func (v *cachedSecrets) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil || opts.FieldSelector != "" {
		return v.liveList(ctx, opts, "")
	}
	rel, named := sel.RequiresExactMatch("name")
	if !named {
		return v.liveList(ctx, opts, "")
	}
	var metas metav1.PartialObjectMetadataList
	metas.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	// Read only: the items are the cache's own objects, not copies.
	if err := v.c.meta.List(ctx, &metas, client.InNamespace(v.ns), client.MatchingLabelsSelector{Selector: sel}, client.UnsafeDisableDeepCopy); err != nil {
		return v.liveList(ctx, opts, rel)
	}
	shown := map[string]uint64{}
	for _, m := range metas.Items {
		rv, ok := parseRV(m.ResourceVersion)
		if !ok {
			return v.liveList(ctx, opts, rel)
		}
		shown[m.Name] = rv
	}
	names := v.c.candidates(v.ns, sel, shown)
	if len(names) == 0 && !v.speaksFor(ctx, rel) {
		return v.liveList(ctx, opts, rel)
	}
	out := &corev1.SecretList{}
	for _, name := range names {
		rv, isShown := shown[name]
		s, ok := v.c.resolve(v.ns, name, rv, isShown, !v.withoutData)
		if !ok {
			if s, err = v.liveGet(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				v.c.forget(v.ns, name)
				continue
			} else if err != nil {
				return nil, err
			}
		}
		if s != nil && sel.Matches(labels.Set(s.Labels)) {
			out.Items = append(out.Items, *s)
		}
	}
	return out, nil
}

// knows reports whether the caches hold any Secret of a release (of any
// type or status): then they speak for the release, and a narrower
// selector that matches none of them matches nothing (the chunked
// driver's index query of a release the Secret driver stores).
func (v *cachedSecrets) knows(ctx context.Context, rel string) bool {
	all := labels.SelectorFromSet(labels.Set{"name": rel})
	if len(v.c.candidates(v.ns, all, nil)) > 0 {
		return true
	}
	var metas metav1.PartialObjectMetadataList
	metas.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("SecretList"))
	err := v.c.meta.List(ctx, &metas, client.InNamespace(v.ns), client.MatchingLabelsSelector{Selector: all}, client.UnsafeDisableDeepCopy)
	return err == nil && len(metas.Items) > 0
}

func (c *secretCache) knownAbsent(ns, rel string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.absent[ns+"/"+rel]
	return ok && c.now().Sub(at) < absentTTL
}

// markAbsent records that the API server holds no Secret of a release.
func (c *secretCache) markAbsent(ns, rel string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.absent[ns+"/"+rel] = c.now()
}

func (v *cachedSecrets) liveList(ctx context.Context, opts metav1.ListOptions, rel string) (*corev1.SecretList, error) {
	metrics.StorageRead("list")
	list, err := v.SecretInterface.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		list.Items[i].Namespace = v.ns
		v.c.remember(&list.Items[i])
	}
	if rel != "" && len(list.Items) == 0 {
		v.c.markAbsent(v.ns, rel)
	}
	return list, nil
}

func (v *cachedSecrets) Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	out, err := v.SecretInterface.Create(ctx, s, opts)
	if err == nil {
		v.c.remember(out)
	}
	return out, err
}

func (v *cachedSecrets) Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	out, err := v.SecretInterface.Update(ctx, s, opts)
	if err == nil {
		v.c.remember(out)
	}
	return out, err
}
