package etcd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/chartkeeper/chartkeeper/internal/apps"
	"github.com/chartkeeper/chartkeeper/internal/etcdcluster"
)

// restoreCommand is the init container of a restored EtcdCluster's
// Pods: the first member of a cluster being created restores the backup
// into its empty data directory; every other case is a no-op.
func restoreCommand(args []string, stdout, stderr io.Writer) int {
	fs := apps.NewFlagSet("etcd-restore", stderr)
	var t etcdcluster.RestoreTarget
	var s3 etcdcluster.S3Config
	backup := fs.String("backup", "", "key of the backup to restore")
	seed := fs.String("seed", "", "name of the member that restores (the others join it)")
	fs.StringVar(&t.Name, "name", os.Getenv("POD_NAME"), "this member's name")
	fs.StringVar(&t.DataDir, "data-dir", "", "etcd data directory to create")
	fs.StringVar(&t.PeerURL, "peer-url", "", "this member's peer URL")
	fs.StringVar(&t.Token, "token", "", "initial cluster token")
	fs.StringVar(&s3.Endpoint, "s3-endpoint", "", "S3 endpoint host[:port]")
	fs.StringVar(&s3.Bucket, "s3-bucket", "", "S3 bucket")
	fs.StringVar(&s3.Prefix, "s3-prefix", "", "S3 key prefix")
	fs.StringVar(&s3.Region, "s3-region", "", "S3 region")
	fs.BoolVar(&s3.Insecure, "s3-insecure", false, "plain HTTP")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	if code, ok := apps.ParseFlags(fs, args); !ok {
		return code
	}
	if *backup == "" || t.Name == "" || t.DataDir == "" || t.PeerURL == "" || *seed == "" {
		fmt.Fprintln(stderr, "chartkeeper etcd-restore: --backup, --name, --seed, --data-dir and --peer-url are required")
		return apps.ExitConfig
	}
	state := os.Getenv("ETCD_INITIAL_CLUSTER_STATE")
	if t.Name != *seed || state != "new" {
		fmt.Fprintf(stdout, "etcd-restore: %s joins the cluster (seed %s, cluster state %q): nothing to restore\n", t.Name, *seed, state)
		return apps.ExitOK
	}
	t.InitialCluster = t.Name + "=" + t.PeerURL
	store, err := etcdcluster.NewS3Store(s3, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
	if err != nil {
		fmt.Fprintf(stderr, "chartkeeper etcd-restore: %v\n", err)
		return apps.ExitConfig
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	switch err := etcdcluster.Restore(ctx, store, *backup, t); {
	case errors.Is(err, etcdcluster.ErrAlreadyRestored):
		fmt.Fprintf(stdout, "etcd-restore: %s already holds a member: nothing to do\n", t.DataDir)
	case err != nil:
		fmt.Fprintf(stderr, "chartkeeper etcd-restore: %v\n", err)
		return apps.ExitFailure
	default:
		fmt.Fprintf(stdout, "etcd-restore: restored %s into %s\n", *backup, t.DataDir)
	}
	return apps.ExitOK
}
