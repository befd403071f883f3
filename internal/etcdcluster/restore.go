package etcdcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"
)

// RestoreTarget is the member a snapshot seeds: the first member of a new
// cluster, which later members join.
type RestoreTarget struct {
	Name, PeerURL string
	// InitialCluster is "name=peerURL" of the new cluster's first member.
	InitialCluster, Token string
	// DataDir must not hold a member yet; its parent must be writable.
	DataDir string
}

// ErrAlreadyRestored: the data directory already holds a member; the
// restore is not repeated (a restarted Pod keeps its data).
var ErrAlreadyRestored = errors.New("data directory already holds an etcd member")

// Restore fetches the snapshot key from the store and restores it into
// t.DataDir with etcdutl's snapshot restore (hash checked). The data
// directory appears whole or not at all.
func Restore(ctx context.Context, store Store, key string, t RestoreTarget) error {
	if _, err := os.Stat(filepath.Join(t.DataDir, "member")); err == nil {
		return ErrAlreadyRestored
	}
	parent := filepath.Dir(t.DataDir)
	r, err := store.Get(ctx, key)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.CreateTemp(parent, "restore-*.db")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("downloading backup %s: %w", key, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	work := t.DataDir + ".restoring"
	if err := os.RemoveAll(work); err != nil {
		return err
	}
	err = snapshot.NewV3(zap.NewNop()).Restore(snapshot.RestoreConfig{
		SnapshotPath: f.Name(), Name: t.Name, OutputDataDir: work, PeerURLs: []string{t.PeerURL},
		InitialCluster: t.InitialCluster, InitialClusterToken: t.Token,
	})
	if err != nil {
		_ = os.RemoveAll(work)
		return fmt.Errorf("restoring backup %s: %w", key, err)
	}
	if err := os.RemoveAll(t.DataDir); err != nil {
		return err
	}
	return os.Rename(work, t.DataDir)
}
