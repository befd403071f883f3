package manifests

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct{ kind, want string }{
		// the bundled kinds: their CRD names must not change
		{"WebApp", "webapps"},
		{"EtcdCluster", "etcdclusters"},
		// regular English plurals, as Kubernetes names its resources
		{"Pod", "pods"},
		{"Policy", "policies"},
		{"NetworkPolicy", "networkpolicies"},
		{"Gateway", "gateways"},
		{"Ingress", "ingresses"},
		{"IngressClass", "ingressclasses"},
		{"Box", "boxes"},
		{"Batch", "batches"},
		{"Mesh", "meshes"},
		{"Graph", "graphs"},
		{"Leaf", "leaves"},
		{"Knife", "knives"},
		// irregular: Kubernetes' own exceptions
		{"Endpoints", "endpoints"},
		{"ServiceEndpoints", "serviceendpoints"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			if got := Plural(tc.kind); got != tc.want {
				t.Errorf("Plural(%s) = %s, want %s", tc.kind, got, tc.want)
			}
		})
	}
}
