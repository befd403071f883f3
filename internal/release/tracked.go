package release

// Tracked counts, per in-memory store of the engine, the releases (or
// custom resources) it holds anything of: what chartkeeper_tracked_resources
// reports. Each store lets go of a release when its resource goes
// (Forget, ForgetResource), so with no resource left every count is 0.
func (e *Engine) Tracked() map[string]int {
	return map[string]int{
		"expectations": e.expect.len(),
		"running":      e.running.len(),
		"remediating":  e.remediating.len(),
		"manifests":    e.manifests.len(),
		"rendered":     e.rendered.releases(),
		"drift":        e.drift.baseline.len(),
		"ready":        e.ready.len(),
		"podChecks":    e.podChecks.len(),
		"proofs":       e.proofs.len(),
		"descriptions": e.descriptions.len(),
	}
}

// len counts the releases the memo holds entries of.
func (t *memo[K, V]) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// len counts the releases with an expectation.
func (e *expectations) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m)
}

// len counts the releases with an action running.
func (r *runningActions) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.n)
}

// len counts the resources being remediated, of every kind.
func (f *remediationsInFlight) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, set := range f.byKind {
		n += len(set)
	}
	return n
}

// releases counts the releases whose revisions are kept.
func (c *renderedRevisions) releases() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := map[revisionRef]bool{}
	for _, r := range c.refs {
		seen[revisionRef{release: r.release, namespace: r.namespace}] = true
	}
	return len(seen)
}
