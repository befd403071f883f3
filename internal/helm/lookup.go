package helm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// A chart's lookup function reads the cluster while the chart renders,
// with the credentials of the action's REST configuration: the operator's
// (which may read every Secret of the cluster, for release storage) or
// the impersonated account's. A chart that passes values through tpl lets
// whoever writes those values call lookup. So, unless a watch opens it
// (Guard.LookupCluster, watches.yaml lookup: Cluster), lookup is confined
// to the release namespace: a read of a namespaced kind there goes to the
// API server; any other read (another namespace, every namespace, a
// cluster-scoped kind, a subresource) is answered as not found without
// being sent, so lookup gives an empty result, as under helm template.
// Discovery, which lookup asks first for the kind's resource, is let
// through.

// lookupConfig is the REST configuration the render's lookup uses: cfg,
// confined to ns unless cluster (log is told of each read refused).
func lookupConfig(cfg *rest.Config, ns string, cluster bool, log func(string, ...any)) *rest.Config {
	if cluster {
		return cfg
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return confinedReads{next: rt, namespace: ns, log: log}
	})
	return cfg
}

// confinedReads sends only discovery and reads of namespaced objects of
// one namespace; it answers every other request 404 Not Found itself.
type confinedReads struct {
	next      http.RoundTripper
	namespace string
	log       func(string, ...any)
}

func (c confinedReads) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && inNamespaceOrDiscovery(req.URL.Path, req.URL.RawPath, c.namespace) {
		return c.next.RoundTrip(req)
	}
	if c.log != nil {
		c.log("lookup %s %s answered not found: outside the release namespace %s (watches.yaml lookup: ReleaseNamespace)", req.Method, req.URL.Path, c.namespace)
	}
	return lookupNotFound(req), nil
}

// inNamespaceOrDiscovery reports whether a request path is API discovery
// (/api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>) or a
// collection or object of a namespaced kind in ns
// (.../namespaces/<ns>/<resource>[/<name>]). An escaped path (rawPath set)
// is neither.
func inNamespaceOrDiscovery(path, rawPath, ns string) bool {
	if rawPath != "" || ns == "" {
		return false
	}
	seg := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, s := range seg {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	var rest []string
	switch {
	case seg[0] == "api" && len(seg) <= 2:
		return true
	case seg[0] == "api":
		rest = seg[2:]
	case seg[0] == "apis" && len(seg) <= 3:
		return true
	case seg[0] == "apis":
		rest = seg[3:]
	default:
		return false
	}
	return (len(rest) == 3 || len(rest) == 4) && rest[0] == "namespaces" && rest[1] == ns
}

// lookupNotFound is the API server's 404 answer to a GET, as client-go reads
// it (a Status of reason NotFound).
func lookupNotFound(req *http.Request) *http.Response {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Reason: metav1.StatusReasonNotFound, Code: http.StatusNotFound,
		Message: fmt.Sprintf("%s: not readable by a chart's lookup outside the release namespace", req.URL.Path)}
	body, _ := json.Marshal(st)
	return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{"Content-Type": []string{"application/json"}}, Body: io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)), Request: req}
}

// renderGetter is the action's REST client getter: the kube client's,
// except that the REST configuration it gives (what Helm's render gives
// lookup) is confined as lookupConfig says.
type renderGetter struct {
	*restGetter
	cluster bool
	log     func(string, ...any)
}

func (g renderGetter) ToRESTConfig() (*rest.Config, error) {
	cfg, err := g.restGetter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	return lookupConfig(cfg, g.namespace, g.cluster, g.log), nil
}
