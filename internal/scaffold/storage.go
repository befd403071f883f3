package scaffold

import (
	"fmt"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// chooseStorage estimates the stored release record of the new kind's
// chart, rendered with its defaults and samples, and writes `storage:
// chunked` into its watches.yaml entry when the record would not fit one
// Secret with room to spare (manifests.ChunkedAbove), unless the entry
// has a storage of its own (kept, with a note when it is secret and the
// record is over the limit). It adds the line saying what it chose and
// why (none when it kept the default).
func chooseStorage(r *Result, o Options, w watches.Watch, renders []manifests.Rendered, d *Decisions) error {
	choice, err := manifests.ChooseStorage(renders)
	if err != nil {
		return fmt.Errorf("%s: %w", w, err)
	}
	if w.Storage != "" {
		if w.Storage == watches.StorageSecret && choice.Storage == watches.StorageChunked {
			d.Notes = append(d.Notes, fmt.Sprintf("note: watches.yaml: the storage of %s is yours and is kept, but the release record measures %s (rendered with %s), over the %s a Secret holds with room to spare: consider storage: chunked",
				o.Kind, manifests.Size(choice.Size), choice.What, manifests.Size(manifests.ChunkedAbove)))
		}
		return nil
	}
	if choice.Storage == watches.StorageSecret {
		return nil
	}
	if _, _, err := r.SetStorage(o, choice.Storage); err != nil {
		return err
	}
	d.Lines = append(d.Lines, "  chose "+choice.String())
	return nil
}

// SetStorage writes storage (a release storage driver the caller chose
// by measuring the chart's release record) into the kind's watches.yaml
// entry when the entry has no storage yet. An entry that has one keeps
// it: it is the user's choice, and own is then true.
func (r *Result) SetStorage(o Options, storage string) (c Change, own bool, err error) {
	return r.setWatchField(o, "storage", scalar(storage))
}
