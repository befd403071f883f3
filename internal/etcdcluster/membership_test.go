package etcdcluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

const v1 = "3.6.16"

func putKeys(t *testing.T, c *clientv3.Client, prefix string, n int) {
	t.Helper()
	for i := range n {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := c.Put(ctx, fmt.Sprintf("%s/%03d", prefix, i), fmt.Sprintf("value-%d", i))
		cancel()
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
}

// countKeys reads the prefix from one member's endpoint (serializable: the
// member's own copy).
func countKeys(t *testing.T, url, prefix string) int64 {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, prefix+"/", clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithSerializable())
	if err != nil {
		t.Fatalf("count on %s: %v", url, err)
	}
	return resp.Count
}

// TestScaleKeepsQuorumAndData grows a real 3-member cluster to 5 and
// shrinks it back to 3. Every step changes at most one member, each Pod
// starts only after its member was added, a write succeeds after every
// step, and every member ends with all keys.
func TestScaleKeepsQuorumAndData(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	w.converge(ctx, Spec{Size: 3, Version: v1}, nil)
	kv := w.kv(t)
	putKeys(t, kv, "before", 50)

	prevMembers := 3
	writes := 0
	check := func(p Plan) {
		if d := len(p.Members) - prevMembers; d > 1 || d < -1 {
			t.Fatalf("membership jumped from %d to %d: %+v", prevMembers, len(p.Members), p)
		}
		prevMembers = len(p.Members)
		if p.Action.Kind == ActionAdd && p.Replicas > p.Action.Ordinal+1 {
			t.Fatalf("Pods beyond the added member: %+v", p)
		}
		// Quorum holds: a write through the plan's members goes through
		// after every step (a removed member's process may still run).
		c := w.kvOf(t, p.Members)
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := c.Put(wctx, fmt.Sprintf("during/%03d", writes), "x"); err != nil {
			t.Fatalf("write after plan %+v: %v", p, err)
		}
		writes++
	}
	w.converge(ctx, Spec{Size: 5, Version: v1}, check)
	adds := 0
	for _, p := range w.plans {
		if p.Action.Kind == ActionAdd {
			adds++
		}
	}
	if adds != 2 {
		t.Fatalf("3 -> 5 made %d adds, want 2", adds)
	}
	putKeys(t, w.kv(t), "at5", 20)
	w.converge(ctx, Spec{Size: 3, Version: v1}, check)

	o, c := w.observe(ctx, Spec{Size: 3, Version: v1})
	defer c.Close()
	if len(o.Members) != 3 {
		t.Fatalf("members after 5 -> 3: %+v", o.Members)
	}
	for i := range 3 {
		url := w.addr.ClientURL(i)
		if got := countKeys(t, url, "before"); got != 50 {
			t.Errorf("%s has %d of 50 keys written at size 3", url, got)
		}
		if got := countKeys(t, url, "at5"); got != 20 {
			t.Errorf("%s has %d of 20 keys written at size 5", url, got)
		}
		if got := countKeys(t, url, "during"); got != int64(writes) {
			t.Errorf("%s has %d of %d keys written while scaling", url, got, writes)
		}
	}
	for i := 3; i < maxOrdinals; i++ {
		if w.procs[i] != nil {
			t.Errorf("Pod %d still runs after scaling to 3", i)
		}
	}
	t.Logf("3 -> 5 -> 3 in %d steps, %d writes during scaling, %d changes refused by etcd and retried", len(w.plans), writes, len(w.applyErrs))
}
