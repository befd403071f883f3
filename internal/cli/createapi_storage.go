package cli

import (
	"fmt"
	"io"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/scaffold"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// chooseStorage estimates the stored release record of the new kind's
// chart, rendered with its defaults and samples, and writes `storage:
// chunked` into its watches.yaml entry when the record would not fit one
// Secret with room to spare (manifests.ChunkedAbove), unless the entry
// has a storage of its own (kept, with a note on stderr when it is
// secret and the record is over the limit). It returns the lines saying
// what it chose and why (none when it kept the default).
func chooseStorage(res *scaffold.Result, o scaffold.Options, w watches.Watch, renders []manifests.Rendered, stderr io.Writer) ([]string, error) {
	choice, err := manifests.ChooseStorage(renders)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w, err)
	}
	if w.Storage != "" {
		if w.Storage == watches.StorageSecret && choice.Storage == watches.StorageChunked {
			fmt.Fprintf(stderr, "note: watches.yaml: the storage of %s is yours and is kept, but the release record measures %s (rendered with %s), over the %s a Secret holds with room to spare: consider storage: chunked\n",
				o.Kind, manifests.Size(choice.Size), choice.What, manifests.Size(manifests.ChunkedAbove))
		}
		return nil, nil
	}
	if choice.Storage == watches.StorageSecret {
		return nil, nil
	}
	if _, _, err := res.SetStorage(o, choice.Storage); err != nil {
		return nil, err
	}
	return []string{"  chose " + choice.String()}, nil
}
