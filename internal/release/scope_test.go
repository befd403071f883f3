package release

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestAdmitScope(t *testing.T) {
	cm := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	cr := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}
	in := func(ns string) ownership.Placement { return ownership.Placement{GVK: cm, Name: "x", Namespace: ns} }
	cluster := ownership.Placement{GVK: cr, Name: "x", ClusterScoped: true}
	for _, tc := range []struct {
		name  string
		scope *watches.Scope
		obj   ownership.Placement
		ok    bool
	}{
		{"release namespace, default scope", nil, in("apps"), true},
		{"other namespace, default scope", nil, in("kube-system"), false},
		{"cluster-scoped, default scope", nil, cluster, false},
		{"other namespace listed", &watches.Scope{Namespaces: []string{"monitoring"}}, in("monitoring"), true},
		{"other namespace not listed", &watches.Scope{Namespaces: []string{"monitoring"}}, in("kube-system"), false},
		{"any namespace", &watches.Scope{Namespaces: []string{"*"}}, in("kube-system"), true},
		{"any namespace is not cluster scope", &watches.Scope{Namespaces: []string{"*"}}, cluster, false},
		{"cluster scope allowed", &watches.Scope{ClusterScoped: true}, cluster, true},
		{"cluster scope allowed, other namespace not", &watches.Scope{ClusterScoped: true}, in("kube-system"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := admitScope(tc.scope, "apps")(tc.obj)
			if tc.ok != (err == nil) {
				t.Fatalf("admit(%s) = %v, want ok=%v", tc.obj, err, tc.ok)
			}
			var se *ScopeError
			if err != nil && !errors.As(err, &se) {
				t.Fatalf("error %T is not a *ScopeError", err)
			}
			if err != nil && IsTransient(err) {
				t.Fatalf("a scope violation must not be retried as it is: %v", err)
			}
		})
	}
}
