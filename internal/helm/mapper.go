package helm

import (
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// MappingTTL is how long a REST mapping found once is reused without
// asking the discovery-backed mapper again.
const MappingTTL = CapabilitiesTTL

// memoMapper remembers the REST mappings its mapper found.
//
// Helm's kube client maps every object of every manifest it builds, and the
// engine maps each released object when it reads a manifest. The
// discovery-backed mapper answers each question by asking the mapper of
// every API group in turn, building a "no match" error for each group that
// does not serve the kind: at N=1,000 in make bench that was 170 MB of
// garbage (63 MB of it those errors) for two actions per release, all to
// find the same few mappings again.
//
// A mapping is kept until Reset (Helm's install resets after it creates a
// chart's CRDs, and so does the engine) or until it is MappingTTL old, after
// which it is looked up again: a CRD whose served versions or scope changed
// is seen as soon as the mapper below sees it. Failed look-ups are never
// kept, and one makes the mapper below discover again (at most every
// rediscoverEvery), so a kind whose CRD is created later is found then.
type memoMapper struct {
	meta.ResettableRESTMapper
	now func() time.Time

	mu    sync.Mutex
	found map[string]memoMapping
	// rediscovered: when a look-up that found nothing last reset the
	// mapper below (mayRediscover).
	rediscovered time.Time
}

type memoMapping struct {
	m  *meta.RESTMapping
	at time.Time
}

func newMemoMapper(m meta.ResettableRESTMapper) *memoMapper {
	return &memoMapper{ResettableRESTMapper: m, now: time.Now, found: map[string]memoMapping{}}
}

func mappingKey(gk schema.GroupKind, versions []string) string {
	return gk.String() + "|" + strings.Join(versions, ",")
}

// RESTMapping returns the remembered mapping of gk at versions, else the
// mapper's (remembered when found). The caller gets its own copy.
func (c *memoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	key := mappingKey(gk, versions)
	now := c.now()
	c.mu.Lock()
	e, ok := c.found[key]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < MappingTTL {
		m := *e.m
		return &m, nil
	}
	m, err := c.ResettableRESTMapper.RESTMapping(gk, versions...)
	if meta.IsNoMatchError(err) && c.mayRediscover(now) {
		c.ResettableRESTMapper.Reset()
		m, err = c.ResettableRESTMapper.RESTMapping(gk, versions...)
	}
	if err != nil {
		return nil, err
	}
	kept := *m
	c.mu.Lock()
	c.found[key] = memoMapping{m: &kept, at: now}
	c.mu.Unlock()
	return m, nil
}

// rediscoverEvery bounds how often a kind not found makes the mapper below
// discover the API again.
const rediscoverEvery = 5 * time.Second

// mayRediscover reports whether a look-up that found no kind may reset the
// mapper below and ask again: at most once per rediscoverEvery.
//
// The discovery-backed mapper reads the API's groups once and answers
// from them until Reset: a kind whose CRD became served after that read
// is "no match" for good. The engine resets it after it creates a chart's
// CRDs, but discovery may not list a CRD yet when it is Established (a
// loaded API server updates its discovery document shortly after), and a
// CRD someone else creates is never followed by a reset here: the install
// then failed with MissingDependency on every retry (TestCorpusWalk saw it
// once, for three minutes).
func (c *memoMapper) mayRediscover(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.rediscovered.IsZero() && now.Sub(c.rediscovered) < rediscoverEvery {
		return false
	}
	c.rediscovered = now
	return true
}

// Reset forgets every mapping, here and in the mapper below.
func (c *memoMapper) Reset() {
	c.mu.Lock()
	c.found = map[string]memoMapping{}
	c.mu.Unlock()
	c.ResettableRESTMapper.Reset()
}

var _ meta.ResettableRESTMapper = (*memoMapper)(nil)
