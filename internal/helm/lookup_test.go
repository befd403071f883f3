package helm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

func TestInNamespaceOrDiscovery(t *testing.T) {
	tests := []struct {
		path, raw string
		want      bool
	}{
		{path: "/api", want: true},
		{path: "/api/v1", want: true},
		{path: "/apis", want: true},
		{path: "/apis/apps", want: true},
		{path: "/apis/apps/v1", want: true},
		{path: "/api/v1/namespaces/team-a/secrets", want: true},
		{path: "/api/v1/namespaces/team-a/secrets/db", want: true},
		{path: "/apis/apps/v1/namespaces/team-a/deployments/web", want: true},
		{path: "/api/v1/namespaces/team-b/secrets/db"},
		{path: "/apis/apps/v1/namespaces/team-b/deployments"},
		{path: "/api/v1/secrets"},           // every namespace
		{path: "/api/v1/namespaces"},        // a cluster-scoped kind
		{path: "/api/v1/namespaces/team-a"}, // the release namespace's Namespace
		{path: "/apis/rbac.authorization.k8s.io/v1/clusterroles/admin"},
		{path: "/api/v1/namespaces/team-a/pods/web/log"},      // a subresource
		{path: "/api/v1/namespaces/team-a/../team-b/secrets"}, // not cleaned
		{path: "/api/v1/namespaces/team-a/secrets/a/b", raw: "/api/v1/namespaces/team-a/secrets/a%2Fb"},
		{path: "/api/v1//namespaces/team-a/secrets"},
		{path: "/version"},
		{path: "/"},
	}
	for _, tt := range tests {
		if got := inNamespaceOrDiscovery(tt.path, tt.raw, "team-a"); got != tt.want {
			t.Errorf("inNamespaceOrDiscovery(%q, %q) = %v, want %v", tt.path, tt.raw, got, tt.want)
		}
	}
}

// fakeAPIServer answers discovery of core v1 (Secrets, Namespaces) and a
// GET of any Secret or Namespace with one whose data names it, and records
// each request it was sent (path and impersonated user).
type fakeAPIServer struct {
	mu   sync.Mutex
	seen []string
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.URL.Path+" as "+r.Header.Get("Impersonate-User"))
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var body any
	switch {
	case r.URL.Path == "/api/v1":
		body = metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList"}, GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "secrets", Namespaced: true, Kind: "Secret", Verbs: metav1.Verbs{"get", "list"}},
			{Name: "namespaces", Namespaced: false, Kind: "Namespace", Verbs: metav1.Verbs{"get", "list"}}}}
	case len(seg) == 6 && seg[4] == "secrets":
		body = map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": seg[5], "namespace": seg[3]},
			"data": map[string]any{"token": "from-" + seg[3]}}
	case len(seg) == 4 && seg[2] == "namespaces":
		body = map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": seg[3]}}
	default:
		http.NotFound(w, r)
		return
	}
	_ = json.NewEncoder(w).Encode(body)
}

func (s *fakeAPIServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// lookupChart renders the token of Secret db in team-a and in team-b, and
// whether Namespace team-b exists.
func lookupChart() *chart.Chart {
	tpl := `own={{ dig "data" "token" "absent" (lookup "v1" "Secret" "team-a" "db") }}
other={{ dig "data" "token" "absent" (lookup "v1" "Secret" "team-b" "db") }}
namespace={{ dig "metadata" "name" "absent" (lookup "v1" "Namespace" "" "team-b") }}
`
	return &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "lookup", Version: "0.1.0"},
		Templates: []*chart.File{{Name: "templates/out.txt", Data: []byte(tpl)}}}
}

// The render's lookup, through the getter an action is given: confined to
// the release namespace unless LookupCluster, and always as the
// impersonated user.
func TestActionLookup(t *testing.T) {
	tests := []struct {
		name         string
		guard        Guard
		want         string
		wantSent     []string
		wantNotFound bool
	}{
		{name: "default: the release namespace", guard: Guard{},
			want:     "own=from-team-a\nother=absent\nnamespace=absent\n",
			wantSent: []string{"/api/v1/namespaces/team-a/secrets/db as "}},
		{name: "impersonated: as the account", guard: Guard{As: teamA},
			want:     "own=from-team-a\nother=absent\nnamespace=absent\n",
			wantSent: []string{"/api/v1/namespaces/team-a/secrets/db as " + teamA}},
		{name: "lookup: Cluster", guard: Guard{LookupCluster: true},
			want: "own=from-team-a\nother=from-team-b\nnamespace=team-b\n",
			wantSent: []string{"/api/v1/namespaces/team-a/secrets/db as ", "/api/v1/namespaces/team-b/secrets/db as ",
				"/api/v1/namespaces/team-b as "}},
		{name: "lookup: Cluster, impersonated", guard: Guard{LookupCluster: true, As: teamA},
			want:     "own=from-team-a\nother=from-team-b\nnamespace=team-b\n",
			wantSent: []string{"/api/v1/namespaces/team-b/secrets/db as " + teamA, "/api/v1/namespaces/team-b as " + teamA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := &fakeAPIServer{}
			srv := httptest.NewServer(api)
			defer srv.Close()
			c := NewOffline(storage.Init(driver.NewMemory()), &kubefake.PrintingKubeClient{Out: io.Discard})
			c.getter = &restGetter{cfg: &rest.Config{Host: srv.URL}}
			cfg, err := c.config(context.Background(), "team-a", 0, tt.guard)
			if err != nil {
				t.Fatal(err)
			}
			restCfg, err := cfg.RESTClientGetter.ToRESTConfig()
			if err != nil {
				t.Fatal(err)
			}
			out, err := engine.New(restCfg).Render(lookupChart(), chartutil.Values{})
			if err != nil {
				t.Fatal(err)
			}
			if got := out["lookup/templates/out.txt"]; got != tt.want {
				t.Errorf("rendered\n%s\nwant\n%s", got, tt.want)
			}
			sent := api.requests()
			for _, want := range tt.wantSent {
				if !contains(sent, want) {
					t.Errorf("request %q not sent: %q", want, sent)
				}
			}
			for _, r := range sent {
				if !strings.HasSuffix(r, " as "+tt.guard.As) {
					t.Errorf("request %q not as %q", r, tt.guard.As)
				}
				if !tt.guard.LookupCluster && strings.Contains(r, "team-b") {
					t.Errorf("request %q left the release namespace", r)
				}
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
