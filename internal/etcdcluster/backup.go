package etcdcluster

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// BackupRecord describes one stored snapshot; status.app.lastBackup holds
// the latest.
type BackupRecord struct {
	// Key names the snapshot in the store: spec.restore.backup takes it.
	Key      string `json:"key"`
	Time     string `json:"time"` // RFC 3339, UTC
	Size     int64  `json:"size"`
	Revision int64  `json:"revision"`
	Keys     int    `json:"keys"`
	Version  string `json:"version,omitempty"`
	// Trigger is "schedule" or "request <annotation value>".
	Trigger string `json:"trigger"`
}

// BackupKey names a snapshot of a cluster taken at t:
// <namespace>/<name>/<UTC time>.db. Keys sort by time.
func BackupKey(namespace, name string, t time.Time) string {
	return path.Join(backupPrefix(namespace, name), t.UTC().Format("20060102T150405Z")+".db")
}

func backupPrefix(namespace, name string) string { return path.Join(namespace, name) }

// TakeBackup streams a snapshot through the maintenance API into a
// temporary file under tmpDir ("" for the default), then stores it under
// key. Errors leave nothing behind but possibly a partial object, which
// the store overwrites on the next attempt with the same key.
func TakeBackup(ctx context.Context, c Client, store Store, key, tmpDir string, now time.Time) (BackupRecord, error) {
	snap, err := c.Snapshot(ctx)
	if err != nil {
		return BackupRecord{}, err
	}
	defer snap.Close()
	f, err := os.CreateTemp(tmpDir, "etcd-snapshot-*.db")
	if err != nil {
		return BackupRecord{}, fmt.Errorf("snapshot buffer: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	size, err := io.Copy(f, snap)
	if err != nil {
		return BackupRecord{}, fmt.Errorf("reading snapshot: %w", err)
	}
	if err := f.Sync(); err != nil {
		return BackupRecord{}, err
	}
	// The snapshot's own account of itself (hash checked, revision, keys).
	st, err := snapshot.NewV3(zap.NewNop()).Status(f.Name())
	if err != nil {
		return BackupRecord{}, fmt.Errorf("checking snapshot: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return BackupRecord{}, err
	}
	if err := store.Put(ctx, key, f, size); err != nil {
		return BackupRecord{}, err
	}
	return BackupRecord{Key: key, Time: now.UTC().Format(time.RFC3339), Size: size, Revision: st.Revision, Keys: st.TotalKey, Version: snap.Version}, nil
}

// ParseSchedule parses a standard 5-field cron schedule (or a descriptor
// such as @hourly or "@every 6h").
func ParseSchedule(s string) (cron.Schedule, error) {
	sched, err := cron.ParseStandard(s)
	if err != nil {
		return nil, fmt.Errorf("backup.schedule %q: %w", s, err)
	}
	return sched, nil
}

// NextBackup returns when the schedule next wants a backup, counting from
// the last scheduled backup (or from since, when there was none), and
// whether that time has come.
func NextBackup(sched cron.Schedule, last, since, now time.Time) (time.Time, bool) {
	base := last
	if base.IsZero() {
		base = since
	}
	next := sched.Next(base)
	if !now.Before(next) {
		return next, true
	}
	return next, false
}

// Prune deletes the oldest snapshots under prefix beyond keep (keep <= 0
// keeps all) and returns the keys deleted.
func Prune(ctx context.Context, store Store, prefix string, keep int) ([]string, error) {
	if keep <= 0 {
		return nil, nil
	}
	keys, err := store.List(ctx, strings.TrimSuffix(prefix, "/")+"/")
	if err != nil {
		return nil, err
	}
	var deleted []string
	for len(keys) > keep {
		if err := store.Delete(ctx, keys[0]); err != nil {
			return deleted, err
		}
		deleted = append(deleted, keys[0])
		keys = keys[1:]
	}
	return deleted, nil
}
