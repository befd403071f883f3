package builtin

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
)

// StatusFields copies chosen fields of released objects into the custom
// resource's status.app on every reconcile of the deployed release, so the
// status says what is really running (ready replicas, endpoints, image).
type StatusFields struct {
	Fields []StatusField
}

// The phases StatusFields implements, checked at compile time: hooks.Hook.Impl is
// an any, so a method whose signature drifted from its interface would
// otherwise be silently skipped.
var _ hooks.PostRelease = (*StatusFields)(nil)

// StatusField is one copied field.
type StatusField struct {
	// Name is the key under status.app.
	Name string
	// Kind of the released object (e.g. "Deployment").
	Kind string
	// Object is the object's name. Default: the release name.
	Object string
	// Path is a kubectl-style JSONPath, e.g. "{.status.readyReplicas}".
	Path string
}

// PostRelease implements PostRelease. A field whose object or path is
// missing is removed from status.app; a malformed path is an error.
func (s *StatusFields) PostRelease(ctx context.Context, req hooks.Request, rel hooks.Release) (hooks.Result, error) {
	for _, f := range s.Fields {
		name := f.Object
		if name == "" {
			name = rel.Name
		}
		ref, ok := findObject(rel.Objects, f.Kind, name)
		if !ok {
			delete(req.AppStatus, f.Name)
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(ref.GVK)
		if err := req.Client.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, u); err != nil {
			if apierrors.IsNotFound(err) {
				delete(req.AppStatus, f.Name)
				continue
			}
			return hooks.Result{}, err
		}
		jp := jsonpath.New(f.Name).AllowMissingKeys(true)
		if err := jp.Parse(f.Path); err != nil {
			return hooks.Result{}, fmt.Errorf("status field %s: path %q: %w", f.Name, f.Path, err)
		}
		res, err := jp.FindResults(u.Object)
		if err != nil || len(res) == 0 || len(res[0]) == 0 {
			delete(req.AppStatus, f.Name)
			continue
		}
		req.AppStatus[f.Name] = res[0][0].Interface()
	}
	return hooks.Result{}, nil
}

func findObject(objs []hooks.ObjectRef, kind, name string) (hooks.ObjectRef, bool) {
	for _, o := range objs {
		if o.GVK.Kind == kind && o.Name == name {
			return o, true
		}
	}
	return hooks.ObjectRef{}, false
}
