package controller

// tracked counts, per in-memory store of the controller, the custom
// resources it holds anything of (chartkeeper_tracked_resources): the
// status book, and the release index that maps release Secrets to their
// resources.
func (r *Reconciler) tracked() map[string]int {
	n := 0
	r.releases.Range(func(any, any) bool { n++; return true })
	return map[string]int{"statuses": r.statuses.size(), "releaseIndex": n}
}
