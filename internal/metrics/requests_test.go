package metrics

import "testing"

func TestRequestKind(t *testing.T) {
	for _, c := range []struct {
		method, path   string
		watch          bool
		verb, resource string
	}{
		{"GET", "/api/v1/namespaces/a/secrets", false, "list", "secrets"},
		{"GET", "/api/v1/namespaces/a/secrets", true, "watch", "secrets"},
		{"GET", "/api/v1/namespaces/a/secrets/sh.helm.release.v1.x.v1", false, "get", "secrets"},
		{"POST", "/api/v1/namespaces/a/configmaps", false, "create", "configmaps"},
		{"PUT", "/api/v1/namespaces/a/secrets/s", false, "update", "secrets"},
		{"PATCH", "/apis/bench.chartkeeper.dev/v1/namespaces/a/benches/x/status", false, "patch", "benches/status"},
		{"DELETE", "/apis/apps/v1/namespaces/a/deployments/d", false, "delete", "deployments"},
		{"DELETE", "/api/v1/namespaces/a/pods", false, "deletecollection", "pods"},
		{"GET", "/api/v1/namespaces/a", false, "get", "namespaces"},
		{"GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", false, "list", "customresourcedefinitions"},
		{"GET", "/version", false, "get", ""},
		{"GET", "/apis", false, "get", ""},
	} {
		verb, res := RequestKind(c.method, c.path, c.watch)
		if verb != c.verb || res != c.resource {
			t.Errorf("%s %s watch=%v: got %s %q, want %s %q", c.method, c.path, c.watch, verb, res, c.verb, c.resource)
		}
	}
}
