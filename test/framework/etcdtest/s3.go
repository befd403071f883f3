package etcdtest

import (
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3 serves an in-memory S3 API on 127.0.0.1 with the given bucket for the
// rest of the test and returns its host:port (plain HTTP; any credentials).
func S3(t testing.TB, bucket string) string {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(gofakes3.New(backend).Server())
	srv.Listener.Close()
	srv.Listener = l
	srv.Config.ReadHeaderTimeout = 5 * time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	return l.Addr().String()
}
