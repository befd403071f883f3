package helm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// secretsDriver is Helm's Secret driver with its writes' encoding done by
// encodeRelease below: the same Secrets (name, type, labels, and data that
// Helm and the helm CLI decode), without a new compressor per write.
//
// Helm encodes a revision with a gzip writer it makes for the purpose;
// making one allocates about a megabyte of compressor state. At a
// thousand releases that was 1.9 GB of the 6.9 GB the operator allocated
// over make bench's install and upgrade, the largest single source of its
// garbage-collection work. Reads are Helm's own.
type secretsDriver struct {
	*driver.Secrets
	impl clientcorev1.SecretInterface
}

// releaseSecretType is the type of the Secrets Helm's Secret driver writes.
const releaseSecretType = "helm.sh/release.v1"

func newSecretsDriver(impl clientcorev1.SecretInterface, log func(string, ...any)) *secretsDriver {
	d := &secretsDriver{Secrets: driver.NewSecrets(impl), impl: impl}
	d.Log = log
	return d
}

// Create is driver.Secrets.Create.
func (d *secretsDriver) Create(key string, rls *release.Release) error {
	obj, err := revisionSecret(key, rls, "createdAt")
	if err != nil {
		return fmt.Errorf("create: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := d.impl.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return driver.ErrReleaseExists
		}
		return fmt.Errorf("create: failed to create: %w", err)
	}
	return nil
}

// Update is driver.Secrets.Update.
func (d *secretsDriver) Update(key string, rls *release.Release) error {
	obj, err := revisionSecret(key, rls, "modifiedAt")
	if err != nil {
		return fmt.Errorf("update: failed to encode release %q: %w", rls.Name, err)
	}
	if _, err := d.impl.Update(context.Background(), obj, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: failed to update: %w", err)
	}
	return nil
}

// revisionSecret is Helm's newSecretsObject, with the time label of the
// write (createdAt or modifiedAt).
func revisionSecret(key string, rls *release.Release, stamp string) (*corev1.Secret, error) {
	s, err := encodeRelease(rls)
	if err != nil {
		return nil, err
	}
	lbs := map[string]string{}
	for k, v := range rls.Labels {
		lbs[k] = v
	}
	lbs[stamp] = fmt.Sprintf("%v", time.Now().Unix())
	lbs["name"] = rls.Name
	lbs["owner"] = "helm"
	lbs["status"] = rls.Info.Status.String()
	lbs["version"] = strconv.Itoa(rls.Version)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: key, Labels: lbs},
		Type:       releaseSecretType,
		Data:       map[string][]byte{"release": []byte(s)},
	}, nil
}

// encodeRelease is Helm's: base64 of the gzip (best compression) of the
// release's JSON.
func encodeRelease(rls *release.Release) (string, error) {
	b, err := json.Marshal(rls)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := gzipTo(&buf, b); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// compressor is the one gzip compressor (best compression, Helm's format)
// of the process. Its state is about 800 KB, and compressing is all CPU
// and short (a release of charts/webapp: well under a millisecond), so
// writes take turns at it. A compressor per write held ten of them with ten
// workers writing at once; a pool bounded at GOMAXPROCS held two to four
// (its free ones wait in per-CPU slots that another CPU's Get does not
// look in). It is dropped after compressorIdle unused, so that an idle
// operator holds none.
var compressor struct {
	mu   sync.Mutex
	w    *gzip.Writer
	drop *time.Timer
}

// compressorIdle is how long the compressor is kept unused.
const compressorIdle = time.Minute

// gzipWritersMade counts the compressors made, for the tests.
var gzipWritersMade atomic.Int64

// gzipTo writes the gzip of b (best compression) to buf.
func gzipTo(buf *bytes.Buffer, b []byte) error {
	c := &compressor
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		gzipWritersMade.Add(1)
		c.w, _ = gzip.NewWriterLevel(buf, gzip.BestCompression) // a valid level: no error
	} else {
		c.w.Reset(buf)
	}
	if c.drop == nil {
		c.drop = time.AfterFunc(compressorIdle, dropCompressor)
	} else {
		c.drop.Reset(compressorIdle)
	}
	if _, err := c.w.Write(b); err != nil {
		return err
	}
	return c.w.Close()
}

// dropCompressor lets the collector have the compressor.
func dropCompressor() {
	compressor.mu.Lock()
	defer compressor.mu.Unlock()
	compressor.w = nil
}
