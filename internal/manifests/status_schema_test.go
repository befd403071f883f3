package manifests

import (
	"reflect"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Every field the operator writes into a status is in the CRD's status
// schema: the API server prunes what the schema does not name, so a
// missing field would be silently lost.
// status.deployedRelease is written only under statusCompat: HelmOperator,
// whose schema names it (the default's does not: it is never written).
func TestStatusSchemaNamesEveryStatusField(t *testing.T) {
	checkFields(t, "status", reflect.TypeFor[api.Status](), statusSchemaOf(watches.Watch{StatusCompat: watches.StatusCompatHelmOperator}))
	if _, ok := StatusSchema().Properties["deployedRelease"]; ok {
		t.Error("the default status schema names deployedRelease, which only statusCompat: HelmOperator writes")
	}
}

func checkFields(t *testing.T, path string, typ reflect.Type, schema apiextv1.JSONSchemaProps) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() == reflect.Slice && schema.Items != nil && schema.Items.Schema != nil {
		typ, schema = typ.Elem(), *schema.Items.Schema
	}
	if typ.Kind() != reflect.Struct || schema.XPreserveUnknownFields != nil && *schema.XPreserveUnknownFields {
		return
	}
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		prop, ok := schema.Properties[name]
		if !ok {
			t.Errorf("%s.%s is written by the operator but not in the CRD status schema", path, name)
			continue
		}
		if f.Type.PkgPath() == "" || strings.HasPrefix(f.Type.PkgPath(), "github.com/chartkeeper/") {
			checkFields(t, path+"."+name, f.Type, prop)
		}
	}
}
