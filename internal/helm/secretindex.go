package helm

import (
	"iter"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/chartkeeper/chartkeeper/internal/intern"
)

// The secret cache's index: its entries by namespace and release (see
// secretCache.byRelease).

// put stores the entry of ns/name (key) and indexes it by its release
// (with c.mu held). Labels it replaces are stale (forgetLabels).
func (c *secretCache) put(key string, e *cachedSecret) {
	if old := c.secrets[key]; old != nil && !maps.Equal(old.labels, e.labels) {
		forgetLabels(old.labels)
	}
	c.unindex(key)
	c.secrets[key] = e
	if rk, ok := releaseKey(key, e.labels); ok {
		// Sized to its keys (slices.Concat): a release has a few
		// revisions, and a map of them held eight slots.
		c.byRelease[rk] = slices.Concat(c.byRelease[rk], []string{key})
	}
}

// drop removes the entry of key, its index entry and its labels from the
// intern table (with c.mu held).
func (c *secretCache) drop(key string) {
	if e := c.secrets[key]; e != nil {
		forgetLabels(e.labels)
	}
	c.unindex(key)
}

// forgetLabels drops a release Secret's labels from the intern table once
// the Secret was rewritten or deleted: each write of a revision (pending,
// deployed, superseded; its modifiedAt) gives it labels no other Secret
// will have, and the table would keep the old ones for two of its
// generations.
func forgetLabels(l map[string]string) { intern.Default.Forget(l) }

// unindex removes the entry of key and its index entry (with c.mu held).
func (c *secretCache) unindex(key string) {
	e, ok := c.secrets[key]
	if !ok {
		return
	}
	delete(c.secrets, key)
	if rk, ok := releaseKey(key, e.labels); ok {
		// A copy: inNamespace's caller may be ranging over the old slice.
		keys := slices.DeleteFunc(slices.Clone(c.byRelease[rk]), func(k string) bool { return k == key })
		if len(keys) == 0 {
			delete(c.byRelease, rk)
		} else {
			c.byRelease[rk] = keys
		}
	}
}

// releaseKey is namespace/release of a Secret's key and labels.
func releaseKey(key string, l map[string]string) (string, bool) {
	ns, _, _ := strings.Cut(key, "/")
	rel := l["name"]
	return ns + "/" + rel, rel != ""
}

// candidates names the Secrets a selector may match: those the metadata
// cache shows and those written, read or deleted here whose labels match.
func (c *secretCache) candidates(ns string, sel labels.Selector, shown map[string]uint64) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(shown))
	for name := range shown {
		names = append(names, name)
	}
	for key, e := range c.inNamespace(ns, sel) {
		name := key[len(ns)+1:]
		if _, dup := shown[name]; !dup && sel.Matches(labels.Set(e.labels)) {
			names = append(names, name)
		}
	}
	return names
}

// inNamespace yields the entries of namespace ns that sel may match: a
// selector naming a release, that release's (byRelease); any other, every
// entry of ns (with c.mu held).
func (c *secretCache) inNamespace(ns string, sel labels.Selector) iter.Seq2[string, *cachedSecret] {
	return func(yield func(string, *cachedSecret) bool) {
		if rel, named := sel.RequiresExactMatch("name"); named {
			for _, key := range c.byRelease[ns+"/"+rel] {
				if !yield(key, c.secrets[key]) {
					return
				}
			}
			return
		}
		prefix := ns + "/"
		for key, e := range c.secrets {
			if strings.HasPrefix(key, prefix) && !yield(key, e) {
				return
			}
		}
	}
}

func (c *secretCache) forget(ns, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop(ns + "/" + name)
}
