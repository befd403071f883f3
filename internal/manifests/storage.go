package manifests

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// SecretLimit is what one Secret holds: the API server refuses a Secret
// whose data is over 1 MiB.
const SecretLimit = 1 << 20

// ChunkedAbove is the estimated record size above which create-api
// chooses chunked storage: three quarters of a Secret. The estimate is
// made once, with the chart's defaults and samples; the real record grows
// with what users put in their specs (values are stored twice: as values
// and in the rendered manifest), with longer release names and
// namespaces, with what Helm adds when it installs, and with later
// versions of the chart. A record that outgrows its Secret fails the
// install or upgrade, while chunked storage only hides the release from
// the helm CLI: a quarter of the Secret is kept as headroom.
const ChunkedAbove = SecretLimit / 4 * 3

// StorageChoice is the release storage create-api chooses for a kind.
type StorageChoice struct {
	// Storage is watches.StorageSecret or watches.StorageChunked.
	Storage string
	// Size is the largest estimated record, in bytes; What names the
	// values it was rendered with ("defaults", "sample 1", ...).
	Size int
	What string
}

// String says what was chosen and why, as create-api prints it.
func (c StorageChoice) String() string {
	if c.Storage == watches.StorageChunked {
		return fmt.Sprintf("storage: chunked: the release's stored record measures %s (rendered with %s), over the %s kept as the limit (3/4 of the %s a Secret holds): each revision is split over several Secrets, and helm list does not see the release",
			Size(c.Size), c.What, Size(ChunkedAbove), Size(SecretLimit))
	}
	return fmt.Sprintf("storage: secret (default): the release's stored record measures %s (rendered with %s), under the %s kept as the limit (3/4 of the %s a Secret holds)",
		Size(c.Size), c.What, Size(ChunkedAbove), Size(SecretLimit))
}

// ChooseStorage estimates the record Helm stores for a release of each of
// renders (the chart rendered with its defaults and each sample: Render),
// and chooses chunked storage when the largest is over ChunkedAbove.
func ChooseStorage(renders []Rendered) (StorageChoice, error) {
	c := StorageChoice{Storage: watches.StorageSecret}
	for _, r := range renders {
		n, err := RecordSize(r)
		if err != nil {
			return c, fmt.Errorf("estimating the release record with %s: %w", r.What, err)
		}
		if n > c.Size {
			c.Size, c.What = n, r.What
		}
	}
	if c.Size > ChunkedAbove {
		c.Storage = watches.StorageChunked
	}
	return c, nil
}

// RecordSize returns the size of the record Helm's Secret driver would
// store for a first install of r: base64(gzip(JSON of the release)), the
// release holding the chart (templates, values, schema and files), the
// values and the rendered manifest.
func RecordSize(r Rendered) (int, error) {
	if r.record == nil {
		return 0, fmt.Errorf("%s: not rendered by Render", r.What)
	}
	b, err := json.Marshal(r.record)
	if err != nil {
		return 0, err
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression) // as Helm's driver
	if err != nil {
		return 0, err
	}
	if _, err := zw.Write(b); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	return base64.StdEncoding.EncodedLen(buf.Len()), nil
}

// Size formats a byte count in KiB or MiB, one decimal.
func Size(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}
