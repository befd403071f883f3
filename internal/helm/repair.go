package helm

import (
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/resource"
)

// repairPatch answers a patch the API server refused as invalid by
// merging again from what is live: the three-way merge's original is the
// live object restricted to the fields the previous or the new manifest
// sets (lists whole), so that what the chart sets ends as the new manifest
// says, whatever revision put the live values there. It returns the
// patched object, or ok false when there is nothing to repair (the
// repaired patch is the same, or is refused too: then the first refusal
// stands).
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
	original, err := touched(live, prev, info.Object)
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

// touched is live restricted to the fields a or b sets: maps are followed
// key by key, anything else (lists, values) is taken whole.
func touched(live, a, b runtime.Object) (*unstructured.Unstructured, error) {
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
	out := restrict(maps[0], maps[1], maps[2])
	delete(out, "status") // never the release's (a typed object has an empty one)
	return &unstructured.Unstructured{Object: out}, nil
}

func restrict(live, a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range live {
		av, inA := a[k]
		bv, inB := b[k]
		if !inA && !inB {
			continue
		}
		sub, isMap := v.(map[string]any)
		if !isMap {
			out[k] = v
			continue
		}
		am, _ := av.(map[string]any)
		bm, _ := bv.(map[string]any)
		out[k] = restrict(sub, am, bm)
	}
	return out
}
