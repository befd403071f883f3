package ownership

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

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// PostRenderer marks every rendered object as released for Owner. It
// implements helm's postrender.PostRenderer.
type PostRenderer struct {
	Owner Owner
	// ReleaseNamespace is where namespaced objects without a namespace land.
	ReleaseNamespace string
	// Mapper tells namespaced kinds from cluster-scoped ones. A kind it does
	// not know (a CRD in the same chart) gets no ownerReference.
	Mapper meta.RESTMapper
	// Edit, if set, changes each rendered object before it is marked
	// (images.Relocation.Apply, say). Its error fails the render.
	Edit func(obj map[string]any) error
	// Admit, if set, is asked where each rendered object goes: its
	// namespace (the release namespace when the manifest names none; "" for
	// a cluster-scoped kind) and whether its kind is known to be
	// cluster-scoped. Its error fails the render, before Helm stores or
	// applies anything.
	Admit func(p Placement) error
	// CRDs, if set, takes the rendered CustomResourceDefinitions out of the
	// manifest and is called once, after every object was read and before
	// Helm applies anything, with them (none: an empty slice). A CRD is
	// then no part of the release: no uninstall, rollback or upgrade that
	// drops it deletes it. Its error fails the render.
	CRDs func(crds []*unstructured.Unstructured) error
}

// isCRD reports whether u is a CustomResourceDefinition.
func isCRD(u *unstructured.Unstructured) bool {
	gvk := u.GroupVersionKind()
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition"
}

// Placement is where a rendered object would be created.
type Placement struct {
	GVK  schema.GroupVersionKind
	Name string
	// Namespace is "" for a cluster-scoped object.
	Namespace string
	// ClusterScoped: the API server serves the kind cluster-scoped.
	ClusterScoped bool
}

func (p Placement) String() string {
	if p.ClusterScoped {
		return fmt.Sprintf("%s %s (cluster-scoped)", p.GVK.Kind, p.Name)
	}
	return fmt.Sprintf("%s %s/%s", p.GVK.Kind, p.Namespace, p.Name)
}

// Run implements postrender.PostRenderer.
func (p PostRenderer) Run(in *bytes.Buffer) (*bytes.Buffer, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(in))
	out := &bytes.Buffer{}
	crds := []*unstructured.Unstructured{}
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			if p.CRDs != nil {
				if err := p.CRDs(crds); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading rendered manifests: %w", err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			return nil, fmt.Errorf("rendered manifest is not valid YAML: %w", err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.IsList() {
			return nil, fmt.Errorf("rendered manifest holds a %s: list kinds are not supported, render the items instead", u.GetKind())
		}
		if p.CRDs != nil && isCRD(u) {
			crds = append(crds, u)
			continue
		}
		if p.Edit != nil {
			if err := p.Edit(u.Object); err != nil {
				return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
			}
		}
		if p.Admit != nil {
			if err := p.Admit(p.placement(u)); err != nil {
				return nil, err
			}
		}
		p.mark(u)
		b, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(b)
	}
}

// placement says where u goes. A kind the mapper does not know counts as
// namespaced: Helm cannot apply it either until its CRD is served.
func (p PostRenderer) placement(u *unstructured.Unstructured) Placement {
	gvk := u.GroupVersionKind()
	pl := Placement{GVK: gvk, Name: u.GetName(), Namespace: u.GetNamespace()}
	if p.Mapper != nil {
		if m, err := p.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil && m.Scope.Name() == meta.RESTScopeNameRoot {
			pl.Namespace, pl.ClusterScoped = "", true
			return pl
		}
	}
	if pl.Namespace == "" {
		pl.Namespace = p.ReleaseNamespace
	}
	return pl
}

// mark labels and annotates u as released for the owner, and gives it an
// ownerReference to the owner where the garbage collector can honour one.
// A kept object gets none: it must outlive the resource.
func (p PostRenderer) mark(u *unstructured.Unstructured) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[api.LabelManaged] = "true"
	u.SetLabels(labels)
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[api.AnnotationOwner] = p.Owner.Key()
	u.SetAnnotations(ann)

	if Kept(ann) { // it must outlive the resource: no garbage collection
		return
	}
	if p.Owner.Namespace == "" || p.ReleaseNamespace != p.Owner.Namespace || p.Mapper == nil {
		return
	}
	gvk := u.GroupVersionKind()
	m, err := p.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil || m.Scope.Name() != meta.RESTScopeNameNamespace {
		return
	}
	if ns := u.GetNamespace(); ns != "" && ns != p.Owner.Namespace {
		return
	}
	refs := u.GetOwnerReferences()
	for _, r := range refs {
		if r.UID == p.Owner.UID {
			return
		}
		if r.Controller != nil && *r.Controller {
			return // controlled by something else already: do not fight it
		}
	}
	u.SetOwnerReferences(append(refs, p.Owner.Reference()))
}
