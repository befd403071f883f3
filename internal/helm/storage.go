package helm

import (
	"context"
	"fmt"
	"sync"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// Storage names a release storage driver (watches.yaml storage).
type Storage string

const (
	// StorageSecret is Helm's Secret driver: one Secret per revision, what
	// helm list and helm history read. The default.
	StorageSecret Storage = "secret"
	// StorageChunked is helm-operator-plugins' chunked Secret format
	// (chunkedSecrets, written failure-safe here): an index Secret per revision (labels owner=helm, name, version, status,
	// type=index, key) and chunk Secrets (owner=helm, key, type=chunk)
	// for what does not fit in it. The helm CLI cannot decode them.
	StorageChunked Storage = "chunked"
)

// SecretLimit is the most data the API server takes in one Secret.
const SecretLimit = 1 << 20

// ChunkSize is the most release data one chunked-storage Secret holds:
// half a Secret, well under the API server's request limits.
const ChunkSize = SecretLimit / 2

type storageKey struct{}

// WithStorage returns ctx carrying the release storage the Client's
// actions and reads under ctx use (StorageSecret when none is carried).
func WithStorage(ctx context.Context, s Storage) context.Context {
	return context.WithValue(ctx, storageKey{}, s)
}

func storageOf(ctx context.Context) Storage {
	if s, ok := ctx.Value(storageKey{}).(Storage); ok && s != "" {
		return s
	}
	return StorageSecret
}

// newStorage returns the release storage of kind over a namespace's Secrets.
func newStorage(secrets clientcorev1.SecretInterface, kind Storage, log func(string, ...any)) *storage.Storage {
	ls := &labelledSecrets{SecretInterface: secrets, pending: map[string]map[string]string{}}
	hd := newSecretsDriver(sizedSecrets{secrets}, log)
	d := &switchingDriver{
		secrets: secrets,
		helm:    hd,
		chunked: &labelledDriver{
			Driver:  newChunkedSecrets(ls, ChunkSize, log),
			secrets: ls,
		},
		writeChunked: kind == StorageChunked,
	}
	s := storage.Init(newOneWriteDriver(d))
	s.Log = log
	return s
}

// flushHeld writes what an action's storage still holds (see
// oneWriteDriver); offline storage holds nothing.
func flushHeld(cfg *action.Configuration) error {
	d := cfg.Releases.Driver
	if s, ok := d.(stampingDriver); ok {
		d = s.Driver
	}
	if s, ok := d.(signingDriver); ok {
		d = s.Driver
	}
	if d, ok := d.(*oneWriteDriver); ok {
		return d.flush()
	}
	return nil
}

// joinFlush returns the action's error, or the flush's when the action had none.
func joinFlush(cfg *action.Configuration, err error) error {
	if ferr := flushHeld(cfg); ferr != nil && err == nil {
		return fmt.Errorf("storing the release: %w", ferr)
	}
	return err
}

// sizedSecrets is what Helm's Secret driver sees of the Secrets: a
// release Secret over SecretLimit is refused with what to do about it (the
// API server's own refusal does not say), and the chunked driver's Secrets
// are not listed (Helm would try to decode them, and log each whole).
type sizedSecrets struct{ clientcorev1.SecretInterface }

func (s sizedSecrets) List(ctx context.Context, opts metav1.ListOptions) (*corev1.SecretList, error) {
	list, err := s.SecretInterface.List(ctx, opts)
	if err != nil {
		return nil, err
	}
	items := list.Items[:0]
	for _, sec := range list.Items {
		if !isChunked(&sec) {
			items = append(items, sec)
		}
	}
	list.Items = items
	return list, nil
}

func (s sizedSecrets) Create(ctx context.Context, sec *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	if err := fits(sec); err != nil {
		return nil, err
	}
	return s.SecretInterface.Create(ctx, sec, opts)
}

func (s sizedSecrets) Update(ctx context.Context, sec *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	if err := fits(sec); err != nil {
		return nil, err
	}
	return s.SecretInterface.Update(ctx, sec, opts)
}

func fits(sec *corev1.Secret) error {
	size := 0
	for _, v := range sec.Data {
		size += len(v)
	}
	if size <= SecretLimit {
		return nil
	}
	return fmt.Errorf("release record %s is %.1f MiB, over the 1 MiB a Secret holds: set storage: chunked for this kind in watches.yaml (docs/watches.md, Release storage)",
		sec.Name, float64(size)/float64(1<<20))
}

// labelledDriver is the chunked driver made to label its Secrets with
// the release's labels (Request.Labels: chartkeeper.dev/managed, the
// owner and the digest), as Helm's Secret driver does: the driver itself
// keeps them only inside the encoded release, where neither the
// label-scoped metadata cache nor Revisions can see them.
type labelledDriver struct {
	driver.Driver
	secrets *labelledSecrets
}

func (d *labelledDriver) Create(key string, rls *release.Release) error {
	defer d.secrets.expect(key, rls.Labels)()
	return d.Driver.Create(key, rls)
}

func (d *labelledDriver) Update(key string, rls *release.Release) error {
	defer d.secrets.expect(key, rls.Labels)()
	return d.Driver.Update(key, rls)
}

// labelledSecrets adds the pending labels of a revision (by its key, the
// label both index and chunk Secrets carry) to the Secrets written for it,
// never replacing the driver's own labels. DeleteCollection is a list and
// deletes: a chunked revision's deletion does not depend on the
// deletecollection permission, which RBAC generated before purge.go lacks.
type labelledSecrets struct {
	clientcorev1.SecretInterface
	mu      sync.Mutex
	pending map[string]map[string]string
}

// expect sets the labels of key's Secrets until the returned func is called.
func (l *labelledSecrets) expect(key string, labels map[string]string) func() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pending[key] = labels
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		delete(l.pending, key)
	}
}

func (l *labelledSecrets) label(sec *corev1.Secret) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for k, v := range l.pending[sec.Labels["key"]] {
		if _, set := sec.Labels[k]; !set {
			sec.Labels[k] = v
		}
	}
}

func (l *labelledSecrets) Create(ctx context.Context, sec *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	l.label(sec)
	return l.SecretInterface.Create(ctx, sec, opts)
}

func (l *labelledSecrets) Update(ctx context.Context, sec *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error) {
	l.label(sec)
	return l.SecretInterface.Update(ctx, sec, opts)
}

func (l *labelledSecrets) DeleteCollection(ctx context.Context, opts metav1.DeleteOptions, list metav1.ListOptions) error {
	secrets, err := l.SecretInterface.List(ctx, list)
	if err != nil {
		return err
	}
	for _, s := range secrets.Items {
		if err := l.SecretInterface.Delete(ctx, s.Name, opts); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}
