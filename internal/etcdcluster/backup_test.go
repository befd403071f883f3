package etcdcluster

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/framework/etcdtest"
)

// s3Server serves an in-memory S3 API on 127.0.0.1 with one bucket.
func s3Server(t *testing.T, bucket string) S3Config {
	return S3Config{Endpoint: etcdtest.S3(t, bucket), Bucket: bucket, Prefix: "etcd", Insecure: true}
}

// TestSnapshotRestoresIntoFreshMember backs up a real 3-member cluster to
// an S3 API on 127.0.0.1 and restores the snapshot into the first member
// of a new cluster, which then serves the same keys.
func TestSnapshotRestoresIntoFreshMember(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	spec := Spec{Size: 3, Version: v1}
	w.converge(ctx, spec, nil)
	putKeys(t, w.kv(t), "k", 100)

	store, err := NewS3Store(s3Server(t, "backups"), "access", "secret")
	if err != nil {
		t.Fatal(err)
	}
	_, c := w.observe(ctx, spec)
	defer c.Close()
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	key := BackupKey("ns", "src", now)
	rec, err := TakeBackup(ctx, c, store, key, t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Size == 0 || rec.Revision < 100 || rec.Keys != 100 || rec.Key != "ns/src/20261122T080000Z.db" || rec.Version == "" {
		t.Fatalf("backup record: %+v", rec)
	}
	keys, err := store.List(ctx, "ns/src/")
	if err != nil || len(keys) != 1 || keys[0] != key {
		t.Fatalf("stored keys %v, %v", keys, err)
	}

	// A fresh member of a new cluster, restored from the snapshot.
	ports := etcdtest.FreePorts(t, 2)
	addr := loopback{name: "restored", client: ports[:1], peer: ports[1:]}
	dir := t.TempDir()
	target := RestoreTarget{Name: addr.MemberName(0), PeerURL: addr.PeerURL(0),
		InitialCluster: addr.MemberName(0) + "=" + addr.PeerURL(0), Token: "restored", DataDir: filepath.Join(dir, "data")}
	if err := Restore(ctx, store, key, target); err != nil {
		t.Fatal(err)
	}
	if err := Restore(ctx, store, key, target); !errors.Is(err, ErrAlreadyRestored) {
		t.Fatalf("second restore: %v, want ErrAlreadyRestored", err)
	}
	if err := Restore(ctx, store, "ns/src/missing.db", RestoreTarget{DataDir: filepath.Join(dir, "other")}); !errors.Is(err, ErrNoBackup) {
		t.Fatalf("restore of a missing backup: %v, want ErrNoBackup", err)
	}
	p := etcdtest.Start(t, etcdtest.Config{Name: target.Name, DataDir: target.DataDir, ClientURL: addr.ClientURL(0), PeerURL: addr.PeerURL(0),
		InitialCluster: target.InitialCluster, InitialClusterState: "new", Token: "restored"})
	deadline := time.Now().Add(30 * time.Second)
	for !ready(ctx, addr.ClientURL(0)) {
		if time.Now().After(deadline) || !p.Running() {
			t.Fatalf("restored member not ready:\n%s", p.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := countKeys(t, addr.ClientURL(0), "k"); got != 100 {
		t.Fatalf("restored member has %d of 100 keys", got)
	}
	// It is a new cluster: one member, not the source's.
	rc, err := Dial(ctx, []string{addr.ClientURL(0)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ms, err := rc.Members(ctx)
	if err != nil || len(ms) != 1 || ms[0].Name != "restored-0" {
		t.Fatalf("restored cluster members: %+v, %v", ms, err)
	}
}

func TestScheduleAndPrune(t *testing.T) {
	sched, err := ParseSchedule("0 */6 * * *")
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 11, 22, 7, 10, 0, 0, time.UTC)
	cases := []struct {
		name      string
		last, now time.Time
		next      time.Time
		due       bool
	}{
		{"before the first slot", time.Time{}, created.Add(time.Hour), time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), false},
		{"first slot reached", time.Time{}, time.Date(2026, 11, 22, 12, 0, 1, 0, time.UTC), time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), true},
		{"after a scheduled backup", time.Date(2026, 11, 22, 12, 0, 5, 0, time.UTC), time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC), time.Date(2026, 11, 22, 18, 0, 0, 0, time.UTC), false},
		{"missed slots give one backup", time.Date(2026, 11, 20, 0, 0, 5, 0, time.UTC), time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC), time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC), true},
	}
	for _, tc := range cases {
		next, due := NextBackup(sched, tc.last, created, tc.now)
		if !next.Equal(tc.next) || due != tc.due {
			t.Errorf("%s: next %v due %v, want %v %v", tc.name, next, due, tc.next, tc.due)
		}
	}
	if _, err := ParseSchedule("every tuesday"); err == nil {
		t.Error("a bad schedule parsed")
	}

	ctx := context.Background()
	store, err := NewS3Store(s3Server(t, "bkt"), "a", "s")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		key := BackupKey("ns", "c", created.Add(time.Duration(i)*time.Hour))
		if err := store.Put(ctx, key, strings.NewReader("x"), 1); err != nil {
			t.Fatal(err)
		}
	}
	deleted, err := Prune(ctx, store, "ns/c", 2)
	if err != nil || len(deleted) != 3 || deleted[0] != BackupKey("ns", "c", created) {
		t.Fatalf("prune: %v %v", deleted, err)
	}
	left, _ := store.List(ctx, "ns/c/")
	if len(left) != 2 || left[1] != BackupKey("ns", "c", created.Add(4*time.Hour)) {
		t.Fatalf("left %v", left)
	}
}
