package controller

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// markHold is how long markWatch holds a superseded mark waiting for the
// deployed mark to start.
const markHold = 5 * time.Second

// markWatch sits in front of the Helm client's requests. Once armed, it
// holds the write of a release's revision 1 (an upgrade marking it
// superseded) until the write of revision 2 (marking it deployed) starts,
// or markHold passes, and counts which.
type markWatch struct {
	next    http.RoundTripper
	release string

	mu              sync.Mutex
	armed           bool
	held            chan struct{} // closed when revision 2's write starts
	together, apart int
	superseded      bool // the held write said superseded
}

func (m *markWatch) wrap(rt http.RoundTripper) http.RoundTripper {
	m.next = rt
	return m
}

func (m *markWatch) arm() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.armed = true
}

func (m *markWatch) counts() (together, apart int, superseded bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.together, m.apart, m.superseded
}

func (m *markWatch) RoundTrip(req *http.Request) (*http.Response, error) {
	prefix := "/secrets/sh.helm.release.v1." + m.release + ".v"
	m.mu.Lock()
	armed := m.armed
	m.mu.Unlock()
	if !armed || req.Method != http.MethodPut || !strings.Contains(req.URL.Path, prefix) {
		return m.next.RoundTrip(req)
	}
	switch {
	case strings.HasSuffix(req.URL.Path, prefix+"1"):
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		held := make(chan struct{})
		m.mu.Lock()
		m.held, m.superseded = held, bytes.Contains(body, []byte("superseded"))
		m.mu.Unlock()
		timer := time.NewTimer(markHold)
		defer timer.Stop()
		select {
		case <-held:
			m.count(&m.together)
		case <-timer.C:
			m.count(&m.apart)
		}
	case strings.HasSuffix(req.URL.Path, prefix+"2"):
		m.mu.Lock()
		if m.held != nil {
			close(m.held)
			m.held = nil
		}
		m.mu.Unlock()
	}
	return m.next.RoundTrip(req)
}

func (m *markWatch) count(n *int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*n++
}

// testUpgradeMarksBothRevisionsTogether: a successful upgrade's two
// closing writes, revision 1 marked superseded and revision 2 deployed,
// are sent together, not one after the other, and both land.
func (e *env) testUpgradeMarksBothRevisionsTogether(t *testing.T) {
	const name = "marks"
	w := &markWatch{release: name}
	f := e.newFixture(t, fixtureOptions{helmTransport: w.wrap})
	f.start(t)
	f.create(t, f.note(name, nil))
	r := f.reconciler(e.cl)
	f.settle(t, r, name)

	w.arm()
	ctx := context.Background()
	u := f.mustGet(t, name)
	u.Object["spec"] = map[string]any{"greeting": "upgraded"}
	if err := e.cl.Update(ctx, u); err != nil {
		t.Fatal(err)
	}
	f.settle(t, r, name)

	together, apart, superseded := w.counts()
	if !superseded {
		t.Errorf("the upgrade's write of revision 1 did not mark it superseded")
	}
	if together != 1 || apart != 0 {
		t.Errorf("revision 2's deployed mark started while revision 1's superseded mark was in flight %d times, and after it %d times; want together once", together, apart)
	}
	var list corev1.SecretList
	if err := e.cl.List(ctx, &list, client.InNamespace(f.ns), client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, s := range list.Items {
		got[s.Labels["version"]] = s.Labels["status"]
	}
	if got["1"] != "superseded" || got["2"] != "deployed" || len(got) != 2 {
		t.Errorf("stored revisions by status: %v, want 1 superseded and 2 deployed", got)
	}
}
