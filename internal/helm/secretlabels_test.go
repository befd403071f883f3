package helm

import (
	"context"
	"maps"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/intern"
)

// The intern table shares a release Secret's labels between the storage's
// cache and the metadata cache while they are current, and forgets them
// once the Secret is rewritten (each write of a revision gives it labels
// no other Secret will have) or deleted: it keeps no stale labels.
func TestSecretCacheForgetsStaleLabels(t *testing.T) {
	cs, _, c := purgeableCache(t)
	v := c.view(cs.CoreV1().Secrets("ns"), "ns")
	ctx := context.Background()
	const rel = "labels-forgotten"
	key := "ns/sh.helm.release.v1." + rel + ".v1"
	held := func() map[string]string {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.secrets[key].labels
	}
	// shared: the table hands out the very map the cache holds for a
	// copy of its content (what the metadata cache's transform asks).
	shared := func(m map[string]string) bool {
		return reflect.ValueOf(intern.Default.Map(maps.Clone(m))).UnsafePointer() == reflect.ValueOf(m).UnsafePointer()
	}

	s, err := v.Create(ctx, releaseSecret(rel, 1, "pending-install"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pending := held()
	if !shared(pending) {
		t.Fatal("a written revision's labels are not in the intern table")
	}
	s.Labels = maps.Clone(s.Labels)
	s.Labels["status"] = "deployed"
	if _, err := v.Update(ctx, s, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deployed := held()
	if shared(pending) {
		t.Error("the pending revision's labels are still in the intern table after it was written deployed")
	}
	if !shared(deployed) {
		t.Error("the deployed revision's labels are not in the intern table")
	}
	// Read back unchanged: the labels stay shared.
	if _, err := v.Get(ctx, s.Name, metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if !shared(deployed) {
		t.Error("a read of the unchanged revision dropped its labels from the intern table")
	}
	if err := v.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "owner=helm,name=" + rel}); err != nil {
		t.Fatal(err)
	}
	if shared(deployed) {
		t.Error("a deleted revision's labels are still in the intern table")
	}
}
