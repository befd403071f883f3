package bench

import (
	"fmt"
	"os"
	"path/filepath"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// writeWatches writes the watches.yaml every operator subject is given and
// loads it back.
func writeWatches(dir, chartDir string, gvk schema.GroupVersionKind, concurrency int) (string, watches.Watch, error) {
	path := filepath.Join(dir, "watches.yaml")
	body := fmt.Sprintf(`# The benchmark's watches.yaml: every operator subject gets this file.
- group: %s
  version: %s
  kind: %s
  chart: %s
  maxConcurrentReconciles: %d
`, gvk.Group, gvk.Version, gvk.Kind, chartDir, concurrency)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		return "", watches.Watch{}, err
	}
	ws, err := watches.Load(path)
	if err != nil {
		return "", watches.Watch{}, err
	}
	return path, ws[0], nil
}

// benchCRD is the CRD make manifests would write for the watch, with a
// status that keeps any field: every operator writes a status of its own
// shape, and none should fail on the benchmark's schema.
func benchCRD(w watches.Watch) (*apiextv1.CustomResourceDefinition, error) {
	crd, _, err := manifests.CRD(w, nil, manifests.CRDOptions{})
	if err != nil {
		return nil, err
	}
	for i := range crd.Spec.Versions {
		s := crd.Spec.Versions[i].Schema.OpenAPIV3Schema
		s.Properties["status"] = apiextv1.JSONSchemaProps{Type: "object", XPreserveUnknownFields: ptr.To(true)}
		crd.Spec.Versions[i].AdditionalPrinterColumns = nil
	}
	return crd, nil
}
