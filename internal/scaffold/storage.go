package scaffold

// SetStorage writes storage (a release storage driver the caller chose
// by measuring the chart's release record) into the kind's watches.yaml
// entry when the entry has no storage yet. An entry that has one keeps
// it: it is the user's choice, and own is then true.
func (r *Result) SetStorage(o Options, storage string) (c Change, own bool, err error) {
	return r.setWatchField(o, "storage", scalar(storage))
}
