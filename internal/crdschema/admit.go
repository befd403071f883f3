package crdschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/yaml"
)

// Admit checks a custom resource (YAML or JSON) against the version of crd
// it names, as the API server does on a create with strict field
// validation: an unknown field (one the schema would prune) and every
// value the schema refuses is an error, by field path.
func Admit(crd *apiextv1.CustomResourceDefinition, manifest []byte) error {
	// JSON is read as JSON, as the server reads it: the YAML parser
	// refuses a key longer than 1,024 characters, which JSON allows.
	j := manifest
	if !json.Valid(manifest) {
		var err error
		if j, err = yaml.YAMLToJSON(manifest); err != nil {
			return err
		}
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(j, &obj); err != nil { // integers as int64, as the server reads them
		return err
	}
	apiVersion, _ := obj["apiVersion"].(string)
	var v *apiextv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Group+"/"+crd.Spec.Versions[i].Name == apiVersion {
			v = &crd.Spec.Versions[i]
		}
	}
	if v == nil || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
		return fmt.Errorf("CRD %s serves no schema for %s", crd.Name, apiVersion)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		return err
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return fmt.Errorf("CRD %s: schema not structural: %w", crd.Name, err)
	}
	var errs []error
	pruned := pruning.PruneWithOptions(obj, structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	if len(pruned) > 0 {
		errs = append(errs, fmt.Errorf("strict decoding error: unknown field %s", strings.Join(pruned, ", ")))
	}
	validator, _, err := apivalidation.NewSchemaValidator(&internal)
	if err != nil {
		return err
	}
	for _, e := range apivalidation.ValidateCustomResource(nil, obj, validator) {
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}
