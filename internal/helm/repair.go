package helm

import (
	"encoding/json"
	"reflect"
	"slices"

	"helm.sh/helm/v3/pkg/kube"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/cli-runtime/pkg/resource"
)

// repairPatch answers a patch the API server refused as invalid by
// merging again from what is live: the three-way merge's original is the
// live object restricted to the fields the previous or the new manifest
// sets (lists whole), so that what the chart sets ends as the new manifest
// says, whatever revision put the live values there. It returns the
// patched object, or ok false when there is nothing to repair (the
// repaired patch is the same, or is refused too: then the first refusal
// stands). It takes nothing from others: what it merges away is only
// what the manifests name or this operator wrote (see touched).
//
// Why: Helm's merge takes the previous revision's manifest as what is
// live. When it is not (an action interrupted before its record said
// what it applied, a rollback interrupted before it applied, a hand edit
// with drift correction off), a list entry the previous manifest does not
// name survives the merge: the desired Service port is added next to the
// live one, two unnamed ports the API server refuses, and every later
// upgrade and rollback of the release failed the same way (make chaos
// lost releases so). Fields the charts do not set, such as those other
// controllers own, are left alone, as in Helm's merge.
func repairPatch(helper *resource.Helper, info *resource.Info, prev, live runtime.Object, read bool, refused error) (runtime.Object, bool) {
	if !apierrors.IsInvalid(refused) {
		return nil, false
	}
	if !read {
		obj, err := helper.Get(info.Namespace, info.Name)
		if err != nil {
			return nil, false
		}
		live = obj
	}
	first, _, err := helmPatch(info, prev, live)
	if err != nil {
		return nil, false
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(kube.AsVersioned(info))
	if err != nil {
		return nil, false
	}
	original, err := touched(live, prev, info.Object, meta)
	if err != nil {
		return nil, false
	}
	patch, patchType, err := helmPatch(info, original, live)
	if err != nil || patchType != types.StrategicMergePatchType || string(patch) == string(first) {
		return nil, false
	}
	obj, err := helper.Patch(info.Namespace, info.Name, patchType, patch, nil)
	if err != nil {
		return nil, false
	}
	return obj, true
}

// touched is live restricted to what a or b names: maps are followed key
// by key; a list merged by key (strategic merge patch's patchMergeKey:
// containers by name, ownerReferences by uid, ports by containerPort ...)
// keeps the live entries a or b names by that key, each restricted the
// same way, and those no revision names that only this operator's field
// manager wrote (an action interrupted before its record said what it
// applied): the merge then removes those, and leaves every other entry,
// another controller's (an injected sidecar, another owner's reference),
// as it is. A set of values merged (finalizers) keeps those a or b has, or
// only the operator wrote. Any other list is taken whole (the patch
// replaces it). meta is the object's patch metadata.
func touched(live, a, b runtime.Object, meta strategicpatch.LookupPatchMeta) (*unstructured.Unstructured, error) {
	var maps [3]map[string]any
	for i, o := range []runtime.Object{live, a, b} {
		data, err := json.Marshal(o)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &maps[i]); err != nil {
			return nil, err
		}
	}
	out := restrict(maps[0], maps[1], maps[2], meta, writersOf(maps[0], fieldManager()))
	delete(out, "status") // never the release's (a typed object has an empty one)
	return &unstructured.Unstructured{Object: out}, nil
}

func restrict(live, a, b map[string]any, meta strategicpatch.LookupPatchMeta, w writers) map[string]any {
	out := map[string]any{}
	for k, v := range live {
		av, inA := a[k]
		bv, inB := b[k]
		if !inA && !inB {
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			am, _ := av.(map[string]any)
			bm, _ := bv.(map[string]any)
			var sub strategicpatch.LookupPatchMeta
			if meta != nil {
				sub, _, _ = meta.LookupPatchMetadataForStruct(k)
			}
			out[k] = restrict(v, am, bm, sub, w.field(k))
		case []any:
			al, _ := av.([]any)
			bl, _ := bv.([]any)
			out[k] = restrictList(k, v, al, bl, meta, w.field(k))
		default:
			out[k] = v
		}
	}
	return out
}

// restrictList is restrict's for the list under key k (see touched).
func restrictList(k string, live, a, b []any, meta strategicpatch.LookupPatchMeta, w writers) []any {
	if meta == nil {
		return live
	}
	elem, pm, err := meta.LookupPatchMetadataForSlice(k)
	if err != nil || !slices.Contains(pm.GetPatchStrategies(), "merge") {
		return live
	}
	key := pm.GetPatchMergeKey()
	out := []any{}
	for _, e := range live {
		em, isMap := e.(map[string]any)
		if key == "" || !isMap {
			if slices.ContainsFunc(a, eq(e)) || slices.ContainsFunc(b, eq(e)) || w.onlyOursValue(e) {
				out = append(out, e)
			}
			continue
		}
		ae, be := entryOf(a, key, em[key]), entryOf(b, key, em[key])
		switch {
		case ae != nil || be != nil:
			out = append(out, restrict(em, ae, be, elem, w.entry(em)))
		case w.onlyOursEntry(em):
			out = append(out, e)
		}
	}
	return out
}

// entryOf is the entry of list whose key field is v (nil: none).
func entryOf(list []any, key string, v any) map[string]any {
	if v == nil {
		return nil
	}
	for _, e := range list {
		if m, ok := e.(map[string]any); ok && reflect.DeepEqual(m[key], v) {
			return m
		}
	}
	return nil
}

func eq(v any) func(any) bool { return func(x any) bool { return reflect.DeepEqual(x, v) } }
