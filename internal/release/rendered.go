package release

import (
	"slices"
	"sync"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// renderedRevisions keeps the parsed objects, with what was rendered, of
// the last few revisions read back for it (Engine.renderedOf): a release's
// objects are checked for drift one after another, and each check would
// otherwise decode the whole release again. Bounded: revisions are not
// remembered with what they rendered (objects.go).
type renderedRevisions struct {
	mu   sync.Mutex
	refs []revisionRef // oldest first
	objs map[revisionRef][]object
}

// renderedKept is how many revisions renderedRevisions keeps: more than
// the releases reconciled at once (maxConcurrentReconciles defaults to 10).
const renderedKept = 16

func newRenderedRevisions() *renderedRevisions {
	return &renderedRevisions{objs: map[revisionRef][]object{}}
}

func (c *renderedRevisions) get(r revisionRef) ([]object, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	objs, ok := c.objs[r]
	return objs, ok
}

func (c *renderedRevisions) put(r revisionRef, objs []object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.objs[r]; ok {
		return
	}
	if len(c.refs) == renderedKept {
		delete(c.objs, c.refs[0])
		c.refs = c.refs[1:]
	}
	c.refs = append(c.refs, r)
	c.objs[r] = objs
}

// forget drops the revisions of release ref.
func (c *renderedRevisions) forget(ref watches.ReleaseRef) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refs = slices.DeleteFunc(c.refs, func(r revisionRef) bool {
		if r.release == ref.Name && r.namespace == ref.Namespace {
			delete(c.objs, r)
			return true
		}
		return false
	})
}
