package crdschema

import (
	"context"
	"errors"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
)

// Validate runs the API server's own CustomResourceDefinition validation
// (structural schema, defaults, list types, formats) on crd, so that a
// schema the server would refuse is reported when it is generated, not
// when it is applied. The error lists every problem with its field path.
func Validate(crd *apiextv1.CustomResourceDefinition) error {
	var internal apiextensions.CustomResourceDefinition
	if err := apiextv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &internal, nil); err != nil {
		return err
	}
	errs := validation.ValidateCustomResourceDefinition(context.Background(), &internal)
	return errors.Join(errs.ToAggregate())
}
