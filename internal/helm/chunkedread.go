package helm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The chunked storage's encoding and reads (helm-operator-plugins'
// format, see chunkedSecrets).

type chunk struct {
	name string
	data []byte
}

// chunkedRelease is the stored JSON: the release and its labels (which
// the release's own encoding leaves out).
type chunkedRelease struct {
	release.Release
	Labels map[string]string `json:"labels"`
}

var chunkHashEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz123456").WithPadding(base32.NoPadding)

// encodeChunks is the gzipped JSON of rls in pieces of at most size bytes,
// each named key-hash of its data.
func encodeChunks(key string, rls *release.Release, size int) ([]chunk, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if err := json.NewEncoder(gz).Encode(chunkedRelease{Release: *rls, Labels: rls.Labels}); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	var chunks []chunk
	for i := 0; i < len(data); i += size {
		piece := data[i:min(i+size, len(data))]
		h := fnv.New64a()
		_, _ = h.Write(piece)
		chunks = append(chunks, chunk{name: key + "-" + chunkHashEncoding.EncodeToString(h.Sum(nil)), data: piece})
	}
	return chunks, nil
}

func (c *chunkedSecrets) getIndex(ctx context.Context, key string) (*corev1.Secret, error) {
	s, err := c.client.Get(ctx, key, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, driver.ErrReleaseNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("failed to get secret for key %q: %w", key, err)
	}
	return s, nil
}

func extraChunkNames(index *corev1.Secret) ([]string, error) {
	data, ok := index.Data["extraChunks"]
	if !ok {
		return nil, fmt.Errorf("index secret %q has no extraChunks", index.Name)
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, fmt.Errorf("index secret %q: the names of its chunks: %w", index.Name, err)
	}
	return names, nil
}

// decode reads the revision an index Secret stores, its chunks included.
func (c *chunkedSecrets) decode(ctx context.Context, index *corev1.Secret) (*release.Release, error) {
	names, err := extraChunkNames(index)
	if err != nil {
		return nil, err
	}
	first, ok := index.Data["chunk"]
	if !ok {
		return nil, fmt.Errorf("index secret %q has no chunk", index.Name)
	}
	readers := []io.Reader{bytes.NewReader(first)}
	for i, name := range names {
		s, err := c.client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("failed to get chunk %d secret %q: %w", i+2, name, err)
		}
		data, ok := s.Data["chunk"]
		if !ok {
			return nil, fmt.Errorf("chunk %d secret %q has no chunk", i+2, name)
		}
		readers = append(readers, bytes.NewReader(data))
	}
	gz, err := gzip.NewReader(io.MultiReader(readers...))
	if err != nil {
		return nil, fmt.Errorf("failed to decode release %q: %w", index.Name, err)
	}
	var stored chunkedRelease
	if err := json.NewDecoder(gz).Decode(&stored); err != nil {
		return nil, fmt.Errorf("failed to decode release %q: %w", index.Name, err)
	}
	rls := stored.Release
	rls.Labels = withoutSystemLabels(stored.Labels)
	return &rls, nil
}

// chunkedSystemLabels are the labels the storage sets on an index Secret.
var chunkedSystemLabels = map[string]bool{"name": true, "owner": true, "status": true, "version": true,
	"key": true, "type": true, "createdAt": true, "modifiedAt": true}

func withoutSystemLabels(l map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		if !chunkedSystemLabels[k] {
			out[k] = v
		}
	}
	return out
}

func (c *chunkedSecrets) Get(key string) (*release.Release, error) {
	ctx := context.Background()
	index, err := c.getIndex(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	rls, err := c.decode(ctx, index)
	if err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	return rls, nil
}

func (c *chunkedSecrets) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	ctx := context.Background()
	list, err := c.client.List(ctx, metav1.ListOptions{LabelSelector: labels.Set{"owner": chunkedOwner, "type": "index"}.String()})
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	var out []*release.Release
	for i := range list.Items {
		rls, err := c.decode(ctx, &list.Items[i])
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		rls.Labels = list.Items[i].Labels
		if filter(rls) {
			out = append(out, rls)
		}
	}
	return out, nil
}

// Query selects index Secrets by the labels the storage sets, and their
// releases by the others (kept only inside the stored release).
func (c *chunkedSecrets) Query(query map[string]string) ([]*release.Release, error) {
	server := labels.Set{"owner": chunkedOwner, "type": "index"}
	client := labels.Set{}
	for k, v := range query {
		if chunkedSystemLabels[k] {
			server[k] = v // Helm's owner=helm included: the owner here
		} else {
			client[k] = v
		}
	}
	ctx := context.Background()
	list, err := c.client.List(ctx, metav1.ListOptions{LabelSelector: server.String()})
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	var out []*release.Release
	for i := range list.Items {
		rls, err := c.decode(ctx, &list.Items[i])
		if err != nil {
			return nil, fmt.Errorf("query: %w", err)
		}
		if client.AsSelector().Matches(labels.Set(rls.Labels)) {
			out = append(out, rls)
		}
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}
