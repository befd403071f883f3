package helm

import (
	"context"
	"errors"
	"maps"

	hopstorage "github.com/operator-framework/helm-operator-plugins/pkg/storage"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// switchingDriver writes revisions with the watch's driver and reads each
// with the driver that stored it, so that a watch's storage can be changed
// with releases in place: a revision stored the other way stays readable
// and is updated where it is (see Update); new revisions are stored the
// new way. Both drivers label their revision Secrets owner=helm, name,
// version and status, which is all Revisions and ReleaseOf read.
type switchingDriver struct {
	secrets       clientcorev1.SecretInterface
	helm, chunked driver.Driver
	writeChunked  bool
}

func (d *switchingDriver) writer() driver.Driver {
	if d.writeChunked {
		return d.chunked
	}
	return d.helm
}

// storedBy returns the driver that stored key (the writer when none did).
func (d *switchingDriver) storedBy(key string) (driver.Driver, error) {
	s, err := d.secrets.Get(context.Background(), key, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return d.writer(), nil
	case err != nil:
		return nil, err
	case s.Type == hopstorage.SecretTypeChunkedIndex:
		return d.chunked, nil
	}
	return d.helm, nil
}

func (d *switchingDriver) Name() string { return d.writer().Name() }

func (d *switchingDriver) Create(key string, rls *release.Release) error {
	return d.writer().Create(key, rls)
}

func (d *switchingDriver) Get(key string) (*release.Release, error) {
	drv, err := d.storedBy(key)
	if err != nil {
		return nil, err
	}
	return drv.Get(key)
}

func (d *switchingDriver) Delete(key string) (*release.Release, error) {
	drv, err := d.storedBy(key)
	if err != nil {
		return nil, err
	}
	return drv.Delete(key)
}

// Update rewrites a revision in place, with the driver that stored it:
// a revision is never moved from one kind of storage to the other. Both
// kinds name a revision's (index) Secret by its key, and a Secret's type
// cannot change: a move would delete the revision before it creates it
// anew, and a failure in between (a ServerTimeout, the process killed)
// would lose it. New revisions are stored the new way, and the old ones
// go as maxHistory drops them.
func (d *switchingDriver) Update(key string, rls *release.Release) error {
	drv, err := d.storedBy(key)
	if err != nil {
		return err
	}
	return drv.Update(key, rls)
}

func (d *switchingDriver) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	a, err := d.helm.List(filter)
	if err != nil {
		return nil, err
	}
	b, err := d.chunked.List(filter)
	if err != nil {
		return nil, err
	}
	return append(a, b...), nil
}

func (d *switchingDriver) Query(labels map[string]string) ([]*release.Release, error) {
	var out []*release.Release
	for _, drv := range []driver.Driver{d.helm, d.chunked} {
		rs, err := drv.Query(maps.Clone(labels)) // the chunked driver edits its argument
		if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			return nil, err
		}
		out = append(out, rs...)
	}
	if len(out) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return out, nil
}

// isChunked reports whether a Secret is one of the chunked driver's.
func isChunked(s *corev1.Secret) bool {
	return s.Type == hopstorage.SecretTypeChunkedIndex || s.Type == hopstorage.SecretTypeChunkedChunk
}
