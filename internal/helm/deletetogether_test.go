package helm

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/client-go/kubernetes/scheme"
	restfake "k8s.io/client-go/rest/fake"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// deleteServer answers the DELETEs of a release's objects. Each request
// waits, at most a bound, until every kind's first DELETE has arrived: one
// kind deleted after another never gets there, so each waits out the bound
// and the test sees the requests one kind at a time.
type deleteServer struct {
	mu      sync.Mutex
	kinds   int
	arrived map[string]bool // resource → its first DELETE came
	all     chan struct{}
	// missing: names answered 404; refused: names answered 500; marked:
	// names answered with the object marked for deletion (finalizers).
	missing, refused, marked []string
	// alone: requests that waited out the bound.
	alone int
	seen  []string // resource/name, in arrival order
}

func newDeleteServer(kinds int) *deleteServer {
	return &deleteServer{kinds: kinds, arrived: map[string]bool{}, all: make(chan struct{})}
}

func (s *deleteServer) handle(req *http.Request) (*http.Response, error) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	res, name := parts[len(parts)-2], parts[len(parts)-1]
	s.mu.Lock()
	s.seen = append(s.seen, res+"/"+name)
	if !s.arrived[res] {
		s.arrived[res] = true
		if len(s.arrived) == s.kinds {
			close(s.all)
		}
	}
	s.mu.Unlock()
	select {
	case <-s.all:
	case <-time.After(2 * time.Second):
		s.mu.Lock()
		s.alone++
		s.mu.Unlock()
	}
	status, body := http.StatusOK, `{"kind":"Status","apiVersion":"v1","status":"Success"}`
	switch {
	case slices.Contains(s.missing, name):
		status, body = http.StatusNotFound, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`
	case slices.Contains(s.refused, name):
		status, body = http.StatusInternalServerError, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"InternalError","message":"etcd is away","code":500}`
	case slices.Contains(s.marked, name):
		body = `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"team","deletionTimestamp":"2026-11-28T06:00:00Z","finalizers":["example.com/hold"]}}`
	}
	return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body))}, nil
}

// releaseObjects are Helm's infos for kind/name pairs, in that order.
func releaseObjects(client *restfake.RESTClient, pairs ...string) kube.ResourceList {
	resources := map[string]schema.GroupVersionResource{
		"Deployment": {Group: "apps", Version: "v1", Resource: "deployments"},
		"Service":    {Version: "v1", Resource: "services"},
		"ConfigMap":  {Version: "v1", Resource: "configmaps"},
	}
	var out kube.ResourceList
	for _, p := range pairs {
		kind, name, _ := strings.Cut(p, "/")
		gvr := resources[kind]
		gvk := gvr.GroupVersion().WithKind(kind)
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName(name)
		u.SetNamespace("team")
		out = append(out, &resource.Info{
			Client:    client,
			Mapping:   &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace},
			Namespace: "team", Name: name, Object: u,
		})
	}
	return out
}

func TestAnUninstallDeletesEveryKindTogether(t *testing.T) {
	objects := []string{"Service/web", "Deployment/web", "Deployment/worker", "ConfigMap/web-config", "ConfigMap/web-env"}
	for _, tc := range []struct {
		name                     string
		missing, refused, marked []string
		wantDeleted              []string // nil: Helm's contract, no result with errors
		wantErrs                 int
		// wantNotGone: the objects told as deleted but not gone.
		wantNotGone []string
	}{
		{name: "all deleted", wantDeleted: objects},
		{name: "one gone already", missing: []string{"worker"}, wantDeleted: objects},
		{name: "one refused", refused: []string{"web-env"}, wantErrs: 1},
		{name: "one marked for deletion", marked: []string{"web-config"}, wantDeleted: objects, wantNotGone: []string{"ConfigMap/web-config"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newDeleteServer(3)
			srv.missing, srv.refused, srv.marked = tc.missing, tc.refused, tc.marked
			client := &restfake.RESTClient{
				NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
				Client:               restfake.CreateHTTPClient(srv.handle),
			}
			var mu sync.Mutex
			told := map[string]bool{} // kind/name: gone
			c := reachedClient{Client: &kube.Client{Log: func(string, ...any) {}}, deleted: func(p ownership.Placement, gone bool) {
				mu.Lock()
				defer mu.Unlock()
				told[p.GVK.Kind+"/"+p.Name] = gone
			}}
			res, errs := c.DeleteWithPropagationPolicy(releaseObjects(client, objects...), metav1.DeletePropagationBackground)

			if srv.alone > 0 {
				t.Errorf("%d of %d DELETEs waited for another kind's to finish (arrived in order %v); want every kind's sent together", srv.alone, len(objects), srv.seen)
			}
			if len(srv.seen) != len(objects) {
				t.Errorf("%d DELETEs, want one per object (%d): %v", len(srv.seen), len(objects), srv.seen)
			}
			if len(errs) != tc.wantErrs {
				t.Fatalf("errors %v, want %d", errs, tc.wantErrs)
			}
			for _, err := range errs {
				if !apierrors.IsInternalError(err) {
					t.Errorf("error %v, want the API server's", err)
				}
			}
			if tc.wantDeleted == nil {
				if res != nil {
					t.Errorf("result %v with errors, want none (Helm's contract)", res)
				}
				return
			}
			var got []string
			for _, info := range res.Deleted {
				got = append(got, info.Object.GetObjectKind().GroupVersionKind().Kind+"/"+info.Name)
			}
			if !slices.Equal(got, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v (the manifest's order)", got, tc.wantDeleted)
			}
			var notGone []string
			for _, o := range objects {
				gone, ok := told[o]
				if !ok {
					t.Errorf("not told of %s", o)
				}
				if !gone {
					notGone = append(notGone, o)
				}
			}
			if !slices.Equal(notGone, tc.wantNotGone) {
				t.Errorf("told not gone: %v, want %v", notGone, tc.wantNotGone)
			}
		})
	}
}

func TestAnsweredGone(t *testing.T) {
	now := metav1.Now()
	obj := func(apiVersion, kind string, marked bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(apiVersion)
		u.SetKind(kind)
		u.SetName("web")
		if marked {
			u.SetDeletionTimestamp(&now)
		}
		return u
	}
	for _, c := range []struct {
		name   string
		answer runtime.Object
		gone   bool
	}{
		{"a Status", &metav1.Status{Status: metav1.StatusSuccess}, true},
		{"a Status decoded as unstructured", obj("v1", "Status", false), true},
		{"the object as it was", obj("v1", "ConfigMap", false), true},
		{"the object marked for deletion", obj("v1", "ConfigMap", true), false},
		{"a custom kind named Status, marked", obj("example.com/v1", "Status", true), false},
		{"no answer", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := answeredGone(c.answer); got != c.gone {
				t.Errorf("answeredGone = %v, want %v", got, c.gone)
			}
		})
	}
}
