package crdschema

import (
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestBreakingCRD(t *testing.T) {
	version := func(name string, served bool, spec string) apiextv1.CustomResourceDefinitionVersion {
		v := apiextv1.CustomResourceDefinitionVersion{Name: name, Served: served}
		if spec != "" {
			root := parse(t, "type: object\nproperties:\n  spec: "+spec)
			v.Schema = &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &root}
		}
		return v
	}
	crd := func(scope apiextv1.ResourceScope, stored []string, vs ...apiextv1.CustomResourceDefinitionVersion) *apiextv1.CustomResourceDefinition {
		c := &apiextv1.CustomResourceDefinition{}
		c.Spec.Scope, c.Spec.Versions, c.Status.StoredVersions = scope, vs, stored
		return c
	}
	const (
		v1spec   = "{type: object, properties: {size: {type: integer}}}"
		v1wider  = "{type: object, properties: {size: {type: integer}, mode: {type: string}}}"
		v1string = "{type: object, properties: {size: {type: string}}}"
	)
	ns, cluster := apiextv1.NamespaceScoped, apiextv1.ClusterScoped
	base := crd(ns, []string{"v1"}, version("v1", true, v1spec))
	for _, tc := range []struct {
		name     string
		old, new *apiextv1.CustomResourceDefinition
		want     []string
	}{
		{"unchanged", base, base, nil},
		{"new optional field", base, crd(ns, nil, version("v1", true, v1wider)), nil},
		{"new version beside the old", base, crd(ns, nil, version("v1", true, v1spec), version("v2", true, v1string)), nil},
		{"type changed", base, crd(ns, nil, version("v1", true, v1string)), []string{"version v1: spec.size: type changed from integer to string"}},
		{"served version removed", base, crd(ns, nil, version("v2", true, v1spec)), []string{"version v1: versions: version v1 is no longer served (custom resources are stored in it)"}},
		{"stored version no longer served", crd(ns, []string{"v1", "v1beta1"}, version("v1", true, v1spec)), crd(ns, nil, version("v1", true, v1spec)),
			[]string{"version v1beta1: versions: version v1beta1 is no longer served (custom resources are stored in it)"}},
		{"scope changed", base, crd(cluster, nil, version("v1", true, v1spec)), []string{"scope: changed from Namespaced to Cluster"}},
		{"schema added where none was", crd(ns, nil, version("v1", true, "")), crd(ns, nil, version("v1", true, v1spec)),
			[]string{"version v1: (root): no longer keeps fields it does not list", "version v1: spec: newly typed as object where any field was kept"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range BreakingCRD(tc.old, tc.new) {
				got = append(got, c.String())
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
