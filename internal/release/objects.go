package release

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/readiness"
)

// object is one object a release revision holds, as rendered. A revision's
// objects are remembered per release (revisionMemo) for every later look
// at it, so the rendered object is kept as compact JSON and decoded only
// for the rare drift check or correction: a decoded Deployment is several
// times the size of its JSON.
type object struct {
	GVK       schema.GroupVersionKind
	Namespace string // "" for cluster-scoped kinds
	Name      string
	// keep: marked helm.sh/resource-policy: keep. needsStatus: its
	// readiness must be read (readiness.NeedsStatusOf).
	keep, needsStatus bool
	rendered          []byte
}

// newObject remembers a rendered object.
func newObject(gvk schema.GroupVersionKind, ns string, u *unstructured.Unstructured) (object, error) {
	js, err := u.MarshalJSON()
	if err != nil {
		return object{}, fmt.Errorf("encoding %s %s: %w", gvk.Kind, u.GetName(), err)
	}
	return object{GVK: gvk, Namespace: ns, Name: u.GetName(), rendered: bytes.Clone(js), // not the encoder's spare capacity
		keep: ownership.Kept(u.GetAnnotations()), needsStatus: readiness.NeedsStatusOf(u)}, nil
}

// Desired returns the rendered object, decoded anew (the caller may change it).
func (o object) Desired() (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if len(o.rendered) == 0 {
		return nil, fmt.Errorf("%s: no rendered object", o)
	}
	if err := u.UnmarshalJSON(o.rendered); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", o, err)
	}
	return u, nil
}

// kept reports whether the rendered object is marked
// helm.sh/resource-policy: keep (Helm's uninstall leaves it).
func (o object) kept() bool { return o.keep }

func (o object) String() string {
	if o.Namespace == "" {
		return fmt.Sprintf("%s %s", o.GVK.Kind, o.Name)
	}
	return fmt.Sprintf("%s %s/%s", o.GVK.Kind, o.Namespace, o.Name)
}

// parseManifest reads a release manifest into objects, defaulting the
// namespace of namespaced kinds to the release namespace.
func parseManifest(manifest, releaseNS string, mapper meta.RESTMapper) ([]object, error) {
	docs, err := decodeDocs([]byte(manifest))
	if err != nil {
		return nil, err
	}
	out := make([]object, 0, len(docs))
	for _, u := range docs {
		gvk := u.GroupVersionKind()
		ns := u.GetNamespace()
		namespaced := true
		if mapper != nil {
			if mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
				namespaced = mapping.Scope.Name() == meta.RESTScopeNameNamespace
			}
		}
		switch {
		case !namespaced:
			ns = ""
		case ns == "":
			ns = releaseNS
		}
		u.SetNamespace(ns)
		ob, err := newObject(gvk, ns, u)
		if err != nil {
			return nil, err
		}
		out = append(out, ob)
	}
	return out, nil
}

// decodeDocs reads a multi-document YAML stream into objects, skipping
// empty documents.
func decodeDocs(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, err
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}
