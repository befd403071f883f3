package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3bolt"
)

// runS3 serves an S3 API (gofakes3, data in <dir>/s3.db) on a loopback
// address until ctx ends: somewhere for EtcdCluster backups to go on the
// local cluster. Any access key is accepted.
func runS3(ctx context.Context, dir, addr, bucket string, stdout, stderr io.Writer) int {
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		fmt.Fprintf(stderr, "devcluster s3: --addr %q must be a loopback host:port\n", addr)
		return 2
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "devcluster s3: %v\n", err)
		return 1
	}
	backend, err := s3bolt.NewFile(filepath.Join(dir, "s3.db"))
	if err != nil {
		fmt.Fprintf(stderr, "devcluster s3: %v\n", err)
		return 1
	}
	if err := backend.CreateBucket(bucket); err != nil && !gofakes3.HasErrorCode(err, gofakes3.ErrBucketAlreadyExists) {
		fmt.Fprintf(stderr, "devcluster s3: creating bucket %s: %v\n", bucket, err)
		return 1
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "devcluster s3: %v\n", err)
		return 1
	}
	srv := &http.Server{Handler: gofakes3.New(backend).Server(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(stdout, "s3: serving bucket %s at http://%s (data in %s); Ctrl-C stops it\n", bucket, addr, filepath.Join(dir, "s3.db"))
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "devcluster s3: %v\n", err)
		return 1
	}
	return 0
}
