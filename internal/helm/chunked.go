package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	hopstorage "github.com/operator-framework/helm-operator-plugins/pkg/storage"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/ptr"
)

// chunkedSecrets is the chunked release storage (StorageChunked). It
// stores helm-operator-plugins' format, which that driver reads and
// writes too: per revision an index Secret named by the storage key
// (type operatorframework.io/index.v1; labels owner=helm, name, version,
// status, key, type=index; data: the first chunk of the gzipped release
// and the names of the others, extraChunks) and a chunk Secret for each
// further ChunkSize of it (operatorframework.io/chunk.v1; labels
// owner=helm, key, type=chunk; named key-hash of its data).
//
// Its writes are ordered so that a failure between any two of them (a
// ServerTimeout, the process killed) leaves every revision readable, as
// it was or as it was to be: the chunks an index will name are created
// before it is created or swapped, and the chunks it named before are
// deleted after; a revision is deleted index first. (helm-operator-plugins'
// driver deletes a revision's old chunks before it swaps the index, and
// creates an index before its chunks: one failed write there left an
// index naming chunks that did not exist, and every read of the release's
// history failed, its uninstall included.) A failure can leave chunks no
// index names, which are harmless: those of a revision's key go when it is
// deleted.
type chunkedSecrets struct {
	client    clientcorev1.SecretInterface
	chunkSize int
	log       func(string, ...any)
}

// chunkedOwner is the owner label of the chunked storage's Secrets (the
// one helm-operator-plugins' driver is given here, as Helm's own).
const chunkedOwner = "helm"

func newChunkedSecrets(client clientcorev1.SecretInterface, chunkSize int, log func(string, ...any)) *chunkedSecrets {
	return &chunkedSecrets{client: client, chunkSize: chunkSize, log: log}
}

func (c *chunkedSecrets) Name() string { return chunkedOwner + "/chunkedSecrets" }

func (c *chunkedSecrets) Create(key string, rls *release.Release) error {
	ctx := context.Background()
	chunks, err := encodeChunks(key, rls, c.chunkSize)
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rls.Name, err)
	}
	if err := c.createChunks(ctx, key, chunks[1:], nil); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	index := indexSecret(key, rls, chunks)
	index.Labels["createdAt"] = strconv.FormatInt(time.Now().Unix(), 10)
	if _, err := c.client.Create(ctx, index, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return driver.ErrReleaseExists
		}
		return fmt.Errorf("create: failed to create index secret %q: %w", key, err)
	}
	return nil
}

// Update writes the revision's new chunks, then its index naming them,
// then deletes the chunks the index named before and names no more.
func (c *chunkedSecrets) Update(key string, rls *release.Release) error {
	ctx := context.Background()
	old, err := c.getIndex(ctx, key)
	if err != nil {
		return fmt.Errorf("update: %w", err)
	}
	chunks, err := encodeChunks(key, rls, c.chunkSize)
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rls.Name, err)
	}
	if err := c.createChunks(ctx, key, chunks[1:], old); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	index := indexSecret(key, rls, chunks)
	index.Labels["createdAt"] = old.Labels["createdAt"]
	index.Labels["modifiedAt"] = strconv.FormatInt(time.Now().Unix(), 10)
	if _, err := c.client.Update(ctx, index, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: failed to update index secret %q: %w", key, err)
	}
	oldNames, _ := extraChunkNames(old)
	for _, name := range oldNames {
		if slices.ContainsFunc(chunks, func(ch chunk) bool { return ch.name == name }) {
			continue
		}
		// The revision is written: a chunk left here is only garbage (it
		// names its index as owner, and goes with the revision).
		if err := c.client.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			c.log("update: chunk secret %q of %q left: %v", name, key, err)
		}
	}
	return nil
}

// createChunks creates chunk Secrets, owned by index when there is one
// (an update's: a create's index does not exist yet). A chunk that exists
// is the same chunk if it holds the same data (its name is its data's
// hash): a write retried, or an update that leaves it as it was.
func (c *chunkedSecrets) createChunks(ctx context.Context, key string, chunks []chunk, index *corev1.Secret) error {
	for i, ch := range chunks {
		s := chunkSecret(key, ch, index)
		_, err := c.client.Create(ctx, s, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			var have *corev1.Secret
			if have, err = c.client.Get(ctx, ch.name, metav1.GetOptions{}); err == nil && !bytes.Equal(have.Data["chunk"], ch.data) {
				err = fmt.Errorf("a different secret of that name exists")
			}
		}
		if err != nil {
			return fmt.Errorf("failed to create chunk secret %d of %d %q: %w", i+2, len(chunks)+1, ch.name, err)
		}
	}
	return nil
}

// Delete deletes the revision's index, then its chunks (every chunk
// Secret of its key, those a failed write left included). A revision
// whose chunks cannot be read is deleted all the same.
func (c *chunkedSecrets) Delete(key string) (*release.Release, error) {
	ctx := context.Background()
	index, err := c.getIndex(ctx, key)
	if err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("delete: %w", err)
	}
	rls, err := c.decode(ctx, index)
	if err != nil {
		c.log("delete: revision %q cannot be read, deleted all the same: %v", key, err)
		rls = releaseOfIndex(index)
	}
	if err := c.client.Delete(ctx, key, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &index.UID}}); err != nil && !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("delete: failed to delete index secret %q: %w", key, err)
	}
	sel := labels.Set{"owner": chunkedOwner, "key": key, "type": "chunk"}.String()
	if err := c.client.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel}); err != nil {
		// The revision is gone: its chunks are only garbage, owned by it.
		c.log("delete: chunk secrets of %q left: %v", key, err)
	}
	return rls, nil
}

// releaseOfIndex is what an index Secret's labels say of its revision.
func releaseOfIndex(index *corev1.Secret) *release.Release {
	v, _ := strconv.Atoi(index.Labels["version"])
	return &release.Release{Name: index.Labels["name"], Version: v, Namespace: index.Namespace,
		Info: &release.Info{Status: release.Status(index.Labels["status"])}}
}

func indexSecret(key string, rls *release.Release, chunks []chunk) *corev1.Secret {
	names := make([]string, 0, len(chunks)-1)
	for _, ch := range chunks[1:] {
		names = append(names, ch.name)
	}
	extra, _ := json.Marshal(names) // strings always marshal
	return &corev1.Secret{
		Type: hopstorage.SecretTypeChunkedIndex,
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: map[string]string{
			"name": rls.Name, "owner": chunkedOwner, "status": rls.Info.Status.String(),
			"version": strconv.Itoa(rls.Version), "key": key, "type": "index",
		}},
		Immutable: ptr.To(false),
		Data:      map[string][]byte{"extraChunks": extra, "chunk": chunks[0].data},
	}
}

func chunkSecret(key string, ch chunk, index *corev1.Secret) *corev1.Secret {
	s := &corev1.Secret{
		Type: hopstorage.SecretTypeChunkedChunk,
		ObjectMeta: metav1.ObjectMeta{Name: ch.name, Labels: map[string]string{
			"owner": chunkedOwner, "key": key, "type": "chunk",
			"createdAt": strconv.FormatInt(time.Now().Unix(), 10),
		}},
		Immutable: ptr.To(true),
		Data:      map[string][]byte{"chunk": ch.data},
	}
	if index != nil {
		s.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Secret", Name: index.Name, UID: index.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(false)}}
	}
	return s
}
