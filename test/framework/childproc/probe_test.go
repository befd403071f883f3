package childproc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.Error(w, "not ready: informers", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	if err := Probe(ctx, srv.URL+"/readyz"); err != nil {
		t.Errorf("a 200: %v", err)
	}
	if err := Probe(ctx, srv.URL+"/healthz"); err == nil || !strings.Contains(err.Error(), "503 not ready: informers") {
		t.Errorf("a 503: %v", err)
	}
}
