package helm

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// metaView is a metadata cache the test moves by hand (it lags until
// told to catch up): Secret metadata by name, one namespace.
type metaView struct {
	items map[string]metav1.PartialObjectMetadata
}

func (m *metaView) show(s *corev1.Secret) {
	m.items[s.Name] = metav1.PartialObjectMetadata{ObjectMeta: *s.ObjectMeta.DeepCopy()}
}

func (m *metaView) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	it, ok := m.items[key.Name]
	if !ok {
		return apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, key.Name)
	}
	it.DeepCopyInto(obj.(*metav1.PartialObjectMetadata))
	return nil
}

func (m *metaView) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	var lo client.ListOptions
	lo.ApplyOptions(opts)
	out := list.(*metav1.PartialObjectMetadataList)
	for _, it := range m.items {
		if lo.LabelSelector == nil || lo.LabelSelector.Matches(labels.Set(it.Labels)) {
			out.Items = append(out.Items, *it.DeepCopy())
		}
	}
	return nil
}

// liveSecrets is a fake API server that numbers resourceVersions and
// counts the requests it serves.
func liveSecrets(t *testing.T) (*fake.Clientset, *atomic.Int64) {
	t.Helper()
	cs := fake.NewClientset()
	var rv, calls atomic.Int64
	cs.PrependReactor("*", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls.Add(1)
		switch a := a.(type) {
		case k8stesting.CreateAction: // an UpdateAction is one too: both carry the object
			a.GetObject().(*corev1.Secret).ResourceVersion = strconv.FormatInt(rv.Add(1), 10)
		}
		return false, nil, nil
	})
	return cs, &calls
}

func releaseSecret(rel string, version int, status string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1." + rel + ".v" + strconv.Itoa(version), Namespace: "ns",
			Labels: map[string]string{"owner": "helm", "name": rel, "version": strconv.Itoa(version), "status": status}},
		Data: map[string][]byte{"release": []byte("data of " + status)},
	}
}

var byRelease = metav1.ListOptions{LabelSelector: "owner=helm,name=web"}

func TestSecretCacheAnswersWhatItCanAndAsksTheRest(t *testing.T) {
	ctx := context.Background()
	cs, calls := liveSecrets(t)
	meta := &metaView{items: map[string]metav1.PartialObjectMetadata{}}
	c := newSecretCache(meta, ManagedSecrets)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	v := c.view(cs.CoreV1().Secrets("ns"), "ns")
	expect := func(what string, want int64) {
		t.Helper()
		if got := calls.Swap(0); got != want {
			t.Errorf("%s: %d requests, want %d", what, got, want)
		}
	}
	names := func(l *corev1.SecretList) []string {
		var out []string
		for _, s := range l.Items {
			out = append(out, s.Name+"="+s.Labels["status"])
		}
		return out
	}

	// A new release: the caches know nothing, the API server is asked once.
	l, err := v.List(ctx, byRelease)
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("first list: %v %v", names(l), err)
	}
	expect("first list of an unknown release", 1)
	if l, _ = v.List(ctx, byRelease); len(l.Items) != 0 {
		t.Fatalf("second list: %v", names(l))
	}
	expect("second list (known absent)", 0)

	// Written here, not yet in the metadata cache: answered from the write.
	created, err := v.Create(ctx, releaseSecret("web", 1, "pending-install"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l, _ = v.List(ctx, byRelease); len(l.Items) != 1 || l.Items[0].Labels["status"] != "pending-install" {
		t.Fatalf("list after create: %v", names(l))
	}
	upd, err := v.Update(ctx, releaseSecret("web", 1, "deployed"), metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Get(ctx, upd.Name, metav1.GetOptions{})
	if err != nil || got.Labels["status"] != "deployed" {
		t.Fatalf("get after update: %v %v", got, err)
	}
	expect("create, list, update, get", 2)
	// Helm's check that the next revision is not stored yet: known absent.
	if _, err := v.Get(ctx, "sh.helm.release.v1.web.v2", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("next revision: %v, want NotFound", err)
	}
	expect("get of the next revision", 0)

	// The metadata cache shows the create only (lags the update): the update wins.
	meta.show(created)
	if got, _ = v.Get(ctx, upd.Name, metav1.GetOptions{}); got.Labels["status"] != "deployed" {
		t.Errorf("a lagging cache hid a write made here: %v", got.Labels)
	}
	// A narrower selector of a release the caches know: nothing, unasked.
	if l, _ = v.List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=web,type=index"}); len(l.Items) != 0 {
		t.Errorf("index list: %v", names(l))
	}
	expect("reads served by the caches", 0)

	// Someone else writes (helm CLI): the metadata cache shows a newer version; it is read.
	other := releaseSecret("web", 1, "superseded")
	other.ResourceVersion = upd.ResourceVersion
	outside, err := cs.CoreV1().Secrets("ns").Update(ctx, other, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	calls.Store(0)
	meta.show(outside)
	if l, _ = v.List(ctx, byRelease); len(l.Items) != 1 || l.Items[0].Labels["status"] != "superseded" {
		t.Errorf("list after an outside write: %v", names(l))
	}
	expect("list after an outside write", 1)

	// Deleted here while the metadata cache still shows it: gone, unasked.
	if err := v.Delete(ctx, upd.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("delete", 1)
	if l, _ = v.List(ctx, byRelease); len(l.Items) != 0 {
		t.Errorf("list after delete: %v", names(l))
	}
	if _, err := v.Get(ctx, upd.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
	expect("reads after delete", 0)
}

func TestSecretCacheAsksForReleasesMadeOutside(t *testing.T) {
	ctx := context.Background()
	cs, calls := liveSecrets(t)
	// Made by the helm CLI: no managed label, so never in the metadata cache.
	if _, err := cs.CoreV1().Secrets("ns").Create(ctx, releaseSecret("web", 1, "deployed"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	calls.Store(0)
	c := newSecretCache(&metaView{items: map[string]metav1.PartialObjectMetadata{}}, ManagedSecrets)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	v := c.view(cs.CoreV1().Secrets("ns"), "ns")
	l, err := v.List(ctx, byRelease)
	if err != nil || len(l.Items) != 1 {
		t.Fatalf("list: %d items, %v", len(l.Items), err)
	}
	// Long after: the metadata cache still does not show it, so it is asked again.
	now = now.Add(time.Minute)
	if l, _ = v.List(ctx, byRelease); len(l.Items) != 1 {
		t.Fatalf("second list: %d items", len(l.Items))
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("%d requests, want 2 (a list, then a get of what the cache never showed)", got)
	}
}

func TestSecretCacheOffWithoutMetadata(t *testing.T) {
	cs, _ := liveSecrets(t)
	live := cs.CoreV1().Secrets("ns")
	if got := newSecretCache(nil, ManagedSecrets).view(live, "ns"); got != live {
		t.Errorf("without a metadata cache the view must be the live client")
	}
}

// With every Helm release Secret in the metadata cache, a release it does
// not show does not exist: an install asks the API server nothing; one
// made by the helm CLI is shown there, and its Secrets are read.
func TestSecretCacheOfEveryReleaseAsksNothingBeforeAnInstall(t *testing.T) {
	ctx := context.Background()
	cs, calls := liveSecrets(t)
	meta := &metaView{items: map[string]metav1.PartialObjectMetadata{}}
	v := newSecretCache(meta, EveryReleaseSecret).view(cs.CoreV1().Secrets("ns"), "ns")

	if l, err := v.List(ctx, byRelease); err != nil || len(l.Items) != 0 {
		t.Fatalf("list of a new release: %d items, %v", len(l.Items), err)
	}
	if _, err := v.Get(ctx, "sh.helm.release.v1.web.v1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get of a new release's first revision: %v, want NotFound", err)
	}
	if got := calls.Swap(0); got != 0 {
		t.Errorf("%d requests before an install, want none", got)
	}

	// Made by the helm CLI: the cache shows it (no managed label needed).
	outside, err := cs.CoreV1().Secrets("ns").Create(ctx, releaseSecret("db", 1, "deployed"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta.show(outside)
	calls.Store(0)
	l, err := v.List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=db"})
	if err != nil || len(l.Items) != 1 || l.Items[0].Labels["status"] != "deployed" {
		t.Fatalf("list of a release made outside: %d items, %v", len(l.Items), err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("%d requests, want 1 (a get of the revision the cache shows, as nothing here holds its data)", got)
	}
}

// purgeableCache is a secret cache over live Secrets whose
// DeleteCollection deletes what it matches, and a metadata cache moved by
// hand.
func purgeableCache(t *testing.T) (*fake.Clientset, *metaView, *secretCache) {
	t.Helper()
	cs, _ := liveSecrets(t)
	cs.PrependReactor("delete-collection", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.DeleteCollectionAction).GetListRestrictions()
		return true, nil, deleteMatching(cs, a.GetNamespace(), r.Labels, r.Fields)
	})
	meta := &metaView{items: map[string]metav1.PartialObjectMetadata{}}
	return cs, meta, newSecretCache(meta, ManagedSecrets)
}

// The cache finds a release's Secrets through its index by release, and
// the index holds nothing of a Secret the cache has forgotten: a purged
// history's tombstones, once swept, leave no entry behind.
func TestSecretCacheIndexFollowsItsEntries(t *testing.T) {
	cs, meta, c := purgeableCache(t)
	now := time.Now()
	c.now = func() time.Time { return now }
	v := c.view(cs.CoreV1().Secrets("ns"), "ns")
	ctx := context.Background()
	for _, s := range []*corev1.Secret{releaseSecret("web", 1, "superseded"), releaseSecret("web", 2, "deployed"), releaseSecret("webby", 1, "deployed")} {
		out, err := v.Create(ctx, s, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		meta.show(out)
	}
	if got := c.candidates("ns", labels.SelectorFromSet(labels.Set{"name": "web"}), nil); len(got) != 2 {
		t.Fatalf("candidates of web: %v, want its two revisions", got)
	}
	if err := v.DeleteCollection(ctx, metav1.DeleteOptions{}, byRelease); err != nil {
		t.Fatal(err)
	}
	if list, err := v.List(ctx, byRelease); err != nil || len(list.Items) != 0 {
		t.Fatalf("web after its purge, the metadata cache behind: %v %v", list, err)
	}
	delete(meta.items, "sh.helm.release.v1.web.v1") // the watch shows the deletions
	delete(meta.items, "sh.helm.release.v1.web.v2")
	if list, err := v.List(ctx, byRelease); err != nil || len(list.Items) != 0 {
		t.Fatalf("web after its purge: %v %v", list, err)
	}
	if list, err := v.List(ctx, metav1.ListOptions{LabelSelector: "owner=helm,name=webby"}); err != nil || len(list.Items) != 1 {
		t.Fatalf("webby after web's purge: %v %v", list, err)
	}
	now = now.Add(forgetAfter + time.Second)
	c.mu.Lock()
	c.writes = 255
	c.sweep()
	index, entries := len(c.byRelease), len(c.secrets)
	c.mu.Unlock()
	if index != 1 || entries != 1 {
		t.Errorf("after the sweep: %d releases indexed, %d entries; want webby's alone", index, entries)
	}
}
