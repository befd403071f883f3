package release

import (
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

func TestRemediationsInFlightClaimsUpToMaxPerKind(t *testing.T) {
	app := schema.GroupKind{Group: "example.com", Kind: "App"}
	db := schema.GroupKind{Group: "example.com", Kind: "Database"}
	res := func(gk schema.GroupKind, name string) Resource {
		return Resource{GroupKind: gk, NamespacedName: types.NamespacedName{Namespace: "ns", Name: name}}
	}
	f := newRemediationsInFlight()
	if !f.claim(res(app, "a"), 2) || !f.claim(res(app, "b"), 2) {
		t.Fatal("the first two claims of a kind with maxInFlight 2 were refused")
	}
	if f.claim(res(app, "c"), 2) {
		t.Error("a third claim was granted with maxInFlight 2")
	}
	if !f.claim(res(app, "a"), 2) {
		t.Error("a release already in flight was refused its own place")
	}
	if !f.claim(res(db, "a"), 2) {
		t.Error("another kind's claim was refused: the bound is per kind")
	}
	if !f.claim(res(app, "c"), 0) {
		t.Error("maxInFlight 0 refused a claim")
	}
	if n, holds := f.others(res(app, "a")); n != 2 || !holds {
		t.Errorf("others of a: %d, holds %v; want 2 (b, c), true", n, holds)
	}
	f.drop(res(app, "b"))
	f.drop(res(app, "c"))
	f.drop(res(app, "c")) // dropping what is not there is nothing
	if n, holds := f.others(res(app, "z")); n != 1 || holds {
		t.Errorf("others of z after drops: %d, holds %v; want 1, false", n, holds)
	}

	// Concurrent claims never exceed the bound.
	f = newRemediationsInFlight()
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f.claim(res(app, string(rune('a'+i))), 3) {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if granted != 3 {
		t.Errorf("%d of 50 concurrent claims granted with maxInFlight 3", granted)
	}
}
