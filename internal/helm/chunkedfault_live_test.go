package helm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// faultySecretWrites is the transport under the release storage's client
// (the storage itself is the real one): it counts the Secret writes
// (create, update, delete) and answers the failAt-th with a ServerTimeout.
// after: the write reaches the API server and only its answer is lost (a
// ServerTimeout says nothing about whether the write was made).
type faultySecretWrites struct {
	next http.RoundTripper

	mu     sync.Mutex
	writes int
	failAt int // 0: none
	after  bool
	failed string // the write that was failed
}

func (f *faultySecretWrites) arm(at int, after bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes, f.failAt, f.after, f.failed = 0, at, after, ""
}

// report returns the writes counted since arm and the one failed ("": none).
func (f *faultySecretWrites) report() (int, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, f.failed
}

func (f *faultySecretWrites) RoundTrip(req *http.Request) (*http.Response, error) {
	if !isSecretWrite(req) {
		return f.next.RoundTrip(req)
	}
	f.mu.Lock()
	f.writes++
	fail := f.writes == f.failAt
	after := f.after
	if fail {
		f.failed = req.Method + " " + req.URL.Path
	}
	f.mu.Unlock()
	if !fail {
		return f.next.RoundTrip(req)
	}
	if after {
		if resp, err := f.next.RoundTrip(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
	}
	st := apierrors.NewServerTimeout(schema.GroupResource{Resource: "secrets"}, strings.ToLower(req.Method), 0).ErrStatus
	st.APIVersion, st.Kind = "v1", "Status"
	body, _ := json.Marshal(st)
	return &http.Response{
		StatusCode: int(st.Code), Status: fmt.Sprintf("%d Server Timeout", st.Code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: int64(len(body)),
		Body: io.NopCloser(bytes.NewReader(body)), Request: req,
	}, nil
}

// isSecretWrite: a POST, PUT, PATCH or DELETE of /api/v1/namespaces/*/secrets[/name].
func isSecretWrite(req *http.Request) bool {
	switch req.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return false
	}
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	return len(segs) >= 5 && segs[0] == "api" && segs[2] == "namespaces" && segs[4] == "secrets"
}

// chunkyChart is a chart whose stored record is two chunks of the chunked
// storage: a file of 900 KiB of base64-like text (as a large dashboard) is
// about 660 KiB gzipped, over ChunkSize.
func chunkyChart() *chart.Chart {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rnd := rand.New(rand.NewSource(54))
	blob := make([]byte, 900<<10)
	for i := range blob {
		blob[i] = alphabet[rnd.Intn(len(alphabet))]
	}
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: "v2", Name: "chunky", Version: "1.0.0"},
		Values:   map[string]any{"v": "0"},
		Templates: []*chart.File{{Name: "templates/cm.yaml",
			Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  v: {{ .Values.v | quote }}\n")}},
		Files: []*chart.File{{Name: "dashboards/big.json", Data: blob}},
	}
}

// The chunked storage survives a failed write. A release (two chunks a
// revision) is installed, upgraded, rolled back and uninstalled once for
// every Secret write that sequence makes, with that write failed: before
// it reaches the API server, and after (its answer lost). After each
// failure the release's history is readable, and an upgrade (an install
// when nothing was stored), a rollback and an uninstall then work and
// leave no revision behind.
func TestChunkedStorageSurvivesAFailedWrite(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	ctx := WithStorage(context.Background(), StorageChunked)
	ch := chunkyChart()
	req := func(name, v string) Request {
		return Request{Name: name, Namespace: ns, Chart: ch, Values: map[string]any{"v": v}, MaxHistory: 3}
	}
	type step struct {
		name string
		run  func(rel string) error
	}
	// Each case has a client of its own, its writes counted by its own
	// transport: the cases run in parallel.
	newClient := func(t *testing.T) (*Client, *faultySecretWrites, []step) {
		cfg := rest.CopyConfig(env.Config)
		faults := &faultySecretWrites{}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { faults.next = rt; return faults })
		c, err := New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, faults, []step{
			{"install", func(rel string) error { _, err := c.Install(ctx, req(rel, "1")); return err }},
			{"upgrade", func(rel string) error { _, err := c.Upgrade(ctx, req(rel, "2")); return err }},
			{"rollback", func(rel string) error { return c.Rollback(ctx, rel, ns, 1, 3, Guard{}) }},
			{"uninstall", func(rel string) error { return c.Uninstall(ctx, rel, ns, "", Guard{}) }},
		}
	}
	_, faults, steps := newClient(t)

	// The writes of the whole sequence, none failed.
	faults.arm(0, false)
	for _, s := range steps {
		if err := s.run("base"); err != nil {
			t.Fatalf("%s without failures: %v", s.name, err)
		}
	}
	total, _ := faults.report()
	if total < 12 {
		t.Fatalf("the sequence made %d Secret writes; want the chunks' among them", total)
	}
	assertNoStoredRevision(t, env, ns, "base")

	for _, after := range []bool{false, true} {
		for at := 1; at <= total; at++ {
			rel := fmt.Sprintf("w%d-%t", at, after)
			t.Run(rel, func(t *testing.T) {
				t.Parallel()
				c, faults, steps := newClient(t)
				faults.arm(at, after)
				var failedIn string
				for _, s := range steps {
					err := s.run(rel)
					if _, failed := faults.report(); failed != "" {
						failedIn = s.name
						t.Logf("write %d (%s) failed in %s: %v", at, failed, s.name, err)
						break
					}
					if err != nil {
						t.Fatalf("%s failed with no failure injected: %v", s.name, err)
					}
				}
				made, _ := faults.report()
				faults.arm(0, false)
				if failedIn == "" {
					// The uninstall deletes the chunks a list finds, and the
					// garbage collector may have deleted some first (they name
					// their index as owner): the last writes of the sequence
					// vary by one or two between runs.
					if made < at && at > total-3 {
						t.Logf("this run's sequence made %d Secret writes, the first one %d", made, total)
						return
					}
					t.Fatalf("write %d was not made", at)
				}
				hist, err := c.History(ctx, rel, ns)
				if err != nil && !IsNotFound(err) {
					t.Fatalf("history after a failed write in %s: %v", failedIn, err)
				}
				for _, r := range hist {
					if _, err := c.Get(ctx, rel, ns, r.Version); err != nil {
						t.Fatalf("revision %d after a failed write in %s: %v", r.Version, failedIn, err)
					}
				}
				if failedIn != "uninstall" {
					if len(hist) == 0 {
						if _, err := c.Install(ctx, req(rel, "3")); err != nil {
							t.Fatalf("install after a failed write in %s: %v", failedIn, err)
						}
					} else {
						if _, err := c.Unlock(ctx, rel, ns); err != nil && !errors.Is(err, ErrNotLocked) {
							t.Fatalf("unlock after a failed write in %s: %v", failedIn, err)
						}
						if _, err := c.Upgrade(ctx, req(rel, "3")); err != nil {
							t.Fatalf("upgrade after a failed write in %s: %v", failedIn, err)
						}
						last := hist[len(hist)-1].Version
						if err := c.Rollback(ctx, rel, ns, last, 3, Guard{}); err != nil {
							t.Fatalf("rollback to %d after a failed write in %s: %v", last, failedIn, err)
						}
					}
					if hist, err := c.History(ctx, rel, ns); err != nil {
						t.Fatalf("history after recovery: %v", err)
					} else if hist[len(hist)-1].Info.Status != "deployed" {
						t.Fatalf("latest revision %d is %s", hist[len(hist)-1].Version, hist[len(hist)-1].Info.Status)
					}
				}
				if err := c.Uninstall(ctx, rel, ns, "", Guard{}); err != nil {
					t.Fatalf("uninstall after a failed write in %s: %v", failedIn, err)
				}
				assertNoStoredRevision(t, env, ns, rel)
			})
		}
	}
}

// assertNoStoredRevision fails when an index Secret of release rel is left.
func assertNoStoredRevision(t *testing.T, env *testenv.Env, ns, rel string) {
	t.Helper()
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": rel}); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		t.Errorf("revision Secret %s (%s) left after the uninstall", s.Name, s.Labels["status"])
	}
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "type": "chunk"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range list.Items {
		if strings.HasPrefix(s.Labels["key"], "sh.helm.release.v1."+rel+".v") {
			t.Logf("chunk Secret %s left after the uninstall (owners %v)", s.Name, s.OwnerReferences)
		}
	}
}
