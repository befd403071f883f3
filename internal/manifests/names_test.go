package manifests

import "testing"

func TestPlural(t *testing.T) {
	for kind, want := range map[string]string{
		"WebApp": "webapps", "EtcdCluster": "etcdclusters", "Policy": "policies", "Gateway": "gateways",
		"Ingress": "ingresses", "Box": "boxes", "Batch": "batches", "Mesh": "meshes", "Endpoints": "endpointses",
	} {
		if got := Plural(kind); got != want {
			t.Errorf("Plural(%s) = %s, want %s", kind, got, want)
		}
	}
}
