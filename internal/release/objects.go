package release

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/intern"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/readiness"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// object is one object a release revision holds, as rendered. A revision's
// objects are remembered per release (revisionMemo) for every later look
// at it; what was rendered is needed only for the rare drift check or
// correction, so a remembered object keeps the revision it came from
// instead (see remembered and Engine.renderedOf): the rendered JSON of every
// release's objects was the largest part of the memo (make bench, N=1,000:
// 4 of its 6 MB).
type object struct {
	GVK       schema.GroupVersionKind
	Namespace string // "" for cluster-scoped kinds
	Name      string
	// keep: marked helm.sh/resource-policy: keep. needsStatus: its
	// readiness must be read (readiness.NeedsStatusOf).
	keep, needsStatus bool
	// rendered is the object as rendered, as compact JSON; nil in a
	// remembered object, whose from names the revision to read it from.
	rendered []byte
	from     *revisionRef
}

// revisionRef names a stored revision of a release.
type revisionRef struct {
	release, namespace string
	version            int
}

// remembered returns a revision's objects as its memo keeps them: without
// what was rendered, with the revision to read it from.
func remembered(objs []object, ref watches.ReleaseRef, version int) []object {
	from := &revisionRef{release: ref.Name, namespace: ref.Namespace, version: version}
	out := make([]object, len(objs))
	for i, ob := range objs {
		ob.rendered, ob.from = nil, from
		out[i] = ob
	}
	return out
}

// newObject remembers a rendered object.
func newObject(gvk schema.GroupVersionKind, ns string, u *unstructured.Unstructured) (object, error) {
	js, err := u.MarshalJSON()
	if err != nil {
		return object{}, fmt.Errorf("encoding %s %s: %w", gvk.Kind, u.GetName(), err)
	}
	gvk = schema.GroupVersionKind{Group: intern.String(gvk.Group), Version: intern.String(gvk.Version), Kind: intern.String(gvk.Kind)}
	return object{GVK: gvk, Namespace: intern.String(ns), Name: intern.String(u.GetName()), rendered: bytes.Clone(js), // not the encoder's spare capacity
		keep: ownership.Kept(u.GetAnnotations()), needsStatus: readiness.NeedsStatusOf(u)}, nil
}

// renderedOf returns what ob's revision rendered of it, decoded anew (the
// caller may change it): from ob itself, or, for a remembered object, read
// from its revision in the release storage. The few revisions read last
// are kept parsed (renderedRevisions), so the drift checks of a release's
// objects read it once.
func (e *Engine) renderedOf(ctx context.Context, ob object) (*unstructured.Unstructured, error) {
	if len(ob.rendered) > 0 || ob.from == nil {
		return ob.Desired()
	}
	f := *ob.from
	if f.version <= 0 {
		return nil, fmt.Errorf("%s: no revision to read it from", ob)
	}
	objs, ok := e.rendered.get(f)
	if !ok {
		rel, err := e.helm.Get(ctx, f.release, f.namespace, f.version)
		if err != nil {
			return nil, fmt.Errorf("reading revision %d for %s: %w", f.version, ob, err)
		}
		if objs, err = parseManifest(rel.Manifest, f.namespace, e.helm.Mapper()); err != nil {
			return nil, fmt.Errorf("parsing revision %d for %s: %w", f.version, ob, err)
		}
		e.rendered.put(f, objs)
	}
	if o, ok := sameObject(objs, ob); ok {
		return o.Desired()
	}
	// Remembered from a different reading of the revision (the API
	// server's discovery said otherwise then): the next look parses anew.
	e.manifests.forget(releaseKey(watches.ReleaseRef{Name: f.release, Namespace: f.namespace}))
	return nil, fmt.Errorf("%s is not in revision %d", ob, f.version)
}

// sameObject finds ob among objs: by kind, namespace and name, or by kind
// and name alone when that names one object (a kind's scope, and so its
// namespace, read from discovery at another time).
func sameObject(objs []object, ob object) (object, bool) {
	var byName []object
	for _, o := range objs {
		if o.GVK != ob.GVK || o.Name != ob.Name {
			continue
		}
		if o.Namespace == ob.Namespace {
			return o, true
		}
		byName = append(byName, o)
	}
	if len(byName) == 1 {
		return byName[0], true
	}
	return object{}, false
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
