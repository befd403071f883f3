package metrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// apiRequests counts the requests the whole process sends to the API
// server, by verb and resource: what the operator costs the control plane,
// and where (make bench reads it per phase).
var apiRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "chartkeeper_api_requests_total",
	Help: "Requests sent to the Kubernetes API server, by verb (get, list, watch, create, update, patch, delete, deletecollection) and resource.",
}, []string{"verb", "resource"})

func init() { crmetrics.Registry.MustRegister(apiRequests) }

// CountRequests wraps a client transport so that every request it sends is
// counted in chartkeeper_api_requests_total (rest.Config.WrapTransport).
func CountRequests(rt http.RoundTripper) http.RoundTripper {
	return countingTransport{next: rt}
}

type countingTransport struct{ next http.RoundTripper }

func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	verb, resource := RequestKind(r.Method, r.URL.Path, r.URL.Query().Get("watch") == "true")
	apiRequests.WithLabelValues(verb, resource).Inc()
	return t.next.RoundTrip(r)
}

// RequestKind names the verb and resource of an API request from its
// method and path, as the API server's own request metrics do: a GET of a
// collection is a list (a watch with watch=true), a DELETE of one a
// deletecollection; the resource carries its subresource
// ("benches/status"). Paths outside /api and /apis (discovery of the
// server's version, OpenAPI) are resource "".
func RequestKind(method, path string, watch bool) (verb, resource string) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		rest = parts[3:]
	}
	if len(rest) >= 2 && rest[0] == "namespaces" {
		if len(rest) == 2 { // a namespace itself
			rest = []string{"namespaces", rest[1]}
		} else {
			rest = rest[2:]
		}
	}
	named := len(rest) >= 2
	switch len(rest) {
	case 0:
		resource = ""
	case 1, 2:
		resource = rest[0]
	default:
		resource = rest[0] + "/" + rest[2]
	}
	switch method {
	case http.MethodGet:
		verb = "get"
		if !named && resource != "" {
			verb = "list"
		}
		if watch {
			verb = "watch"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if !named {
			verb = "deletecollection"
		}
	default:
		verb = strings.ToLower(method)
	}
	return verb, resource
}
