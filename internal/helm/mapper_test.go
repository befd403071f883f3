package helm

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the look-ups that reach it; what it knows can grow.
type countingMapper struct {
	*meta.DefaultRESTMapper
	lookups, resets int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.lookups++
	return c.DefaultRESTMapper.RESTMapping(gk, versions...)
}

func (c *countingMapper) Reset() { c.resets++ }

func TestMemoMapperRemembersWhatItFound(t *testing.T) {
	deploy := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	widget := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	below := &countingMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper(nil)}
	below.Add(deploy, meta.RESTScopeNamespace)
	now := time.Unix(0, 0)
	m := newMemoMapper(below)
	m.now = func() time.Time { return now }

	steps := []struct {
		name        string
		gvk         schema.GroupVersionKind
		advance     time.Duration
		reset       bool
		learn       *schema.GroupVersionKind
		wantErr     bool
		wantLookups int
	}{
		{name: "first look-up asks the mapper", gvk: deploy, wantLookups: 1},
		{name: "the same again is remembered", gvk: deploy, wantLookups: 1},
		{name: "an unknown kind is not found, after the mapper below discovers again", gvk: widget, wantErr: true, wantLookups: 3},
		{name: "a failure is not remembered: the kind is found once its CRD is", gvk: widget, learn: &widget, wantLookups: 4},
		{name: "and remembered from then", gvk: widget, wantLookups: 4},
		{name: "Reset forgets", gvk: deploy, reset: true, wantLookups: 5},
		{name: "a mapping older than MappingTTL is looked up again", gvk: deploy, advance: MappingTTL, wantLookups: 6},
	}
	for _, s := range steps {
		now = now.Add(s.advance)
		if s.reset {
			m.Reset()
		}
		if s.learn != nil {
			below.Add(*s.learn, meta.RESTScopeNamespace)
		}
		got, err := m.RESTMapping(s.gvk.GroupKind(), s.gvk.Version)
		if (err != nil) != s.wantErr {
			t.Fatalf("%s: error %v, want error %v", s.name, err, s.wantErr)
		}
		if err == nil && got.GroupVersionKind != s.gvk {
			t.Errorf("%s: mapped to %v, want %v", s.name, got.GroupVersionKind, s.gvk)
		}
		if below.lookups != s.wantLookups {
			t.Errorf("%s: %d look-ups reached the mapper, want %d", s.name, below.lookups, s.wantLookups)
		}
	}
	if below.resets != 2 {
		t.Errorf("Reset reached the mapper %d times, want 2 (one on the miss, one asked for)", below.resets)
	}
	// Callers may change what they get without changing what is kept.
	a, _ := m.RESTMapping(deploy.GroupKind(), deploy.Version)
	a.Resource.Resource = "changed"
	b, _ := m.RESTMapping(deploy.GroupKind(), deploy.Version)
	if b.Resource.Resource != "deployments" {
		t.Errorf("a caller's change reached the kept mapping: %q", b.Resource.Resource)
	}
}

// discoveringMapper is the discovery-backed mapper's way: it answers from
// the kinds it discovered at its last Reset, and a kind served after that
// is no match until the next one.
type discoveringMapper struct {
	*meta.DefaultRESTMapper
	served []schema.GroupVersionKind
	resets int
}

func (d *discoveringMapper) Reset() {
	d.resets++
	d.DefaultRESTMapper = meta.NewDefaultRESTMapper(nil)
	for _, gvk := range d.served {
		d.Add(gvk, meta.RESTScopeNamespace)
	}
}

// A kind whose CRD is served only after the mapper below discovered the
// API (discovery lagging behind Established, or a CRD someone else made)
// is found on a later look-up, without anyone resetting the mapper; a kind
// still missing makes it discover again at most every rediscoverEvery.
func TestMemoMapperDiscoversAgainOnAMiss(t *testing.T) {
	issuer := schema.GroupVersionKind{Group: "certs.example.com", Version: "v1", Kind: "Issuer"}
	gizmo := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}
	below := &discoveringMapper{DefaultRESTMapper: meta.NewDefaultRESTMapper(nil)}
	now := time.Unix(0, 0)
	m := newMemoMapper(below)
	m.now = func() time.Time { return now }

	if _, err := m.RESTMapping(issuer.GroupKind(), issuer.Version); !meta.IsNoMatchError(err) {
		t.Fatalf("before its CRD: %v, want no match", err)
	}
	below.served = append(below.served, issuer) // the CRD is served now
	now = now.Add(rediscoverEvery)
	got, err := m.RESTMapping(issuer.GroupKind(), issuer.Version)
	if err != nil || got.GroupVersionKind != issuer {
		t.Fatalf("once its CRD is served: %v, %v; want the mapping", got, err)
	}
	now = now.Add(rediscoverEvery)
	resets := below.resets
	for range 3 {
		if _, err := m.RESTMapping(gizmo.GroupKind(), gizmo.Version); !meta.IsNoMatchError(err) {
			t.Fatalf("a kind never served: %v, want no match", err)
		}
	}
	if below.resets != resets+1 {
		t.Errorf("three misses within %s reset the mapper below %d times, want 1", rediscoverEvery, below.resets-resets)
	}
}
