package helm

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	jsonpatch "github.com/evanphx/json-patch"
	"helm.sh/helm/v3/pkg/kube"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/cli-runtime/pkg/resource"
)

// Update is Helm's update of a release's objects (upgrade, rollback) with
// the same patches, one GET per object instead of two or three.
//
// Helm's kube client reads an object it is about to patch, then reads it
// again to compute the patch, and reads it a third time when there is
// nothing to patch (to refresh its copy): make bench counted 7.9 GETs per
// upgrade of a three-object release. Here each object kept from the
// previous revision is read once, several at a time: its patch is Helm's (a three-way
// strategic merge of the previous manifest, the new one and the live
// object for built-in kinds; a JSON merge patch of the two manifests for
// others), sent only when not empty; the live copy refreshes the object
// when there is nothing to send. Objects new in this revision and objects
// it drops (with their keep policy) are left to Helm's own code, in
// Helm's order. --force goes to Helm whole. CRDs are never among the
// previous objects (crds.go).
func (c reachedClient) Update(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	original = withoutCRDs(original)
	if force {
		return c.Client.Update(original, target, force)
	}
	res := &kube.Result{}
	var failed []string
	live := readLive(target.Filter(func(info *resource.Info) bool { return original.Get(info) != nil }))
	err := target.Visit(func(info *resource.Info, err error) error {
		if err != nil {
			return err
		}
		prev := original.Get(info)
		if prev == nil {
			// New in this revision: Helm creates it (or adopts a live one).
			sub, err := c.Client.Update(nil, kube.ResourceList{info}, false)
			if sub != nil {
				res.Created = append(res.Created, sub.Created...)
				res.Updated = append(res.Updated, sub.Updated...)
			}
			return err
		}
		helper := resource.NewHelper(info.Client, info.Mapping).WithFieldManager(kube.ManagedFieldsManager)
		current := live[info]
		switch err := current.err; {
		case apierrors.IsNotFound(err):
			res.Created = append(res.Created, info)
			obj, err := helper.Create(info.Namespace, true, info.Object)
			if err != nil {
				return fmt.Errorf("failed to create resource: %w", err)
			}
			return info.Refresh(obj, true)
		case err != nil:
			return fmt.Errorf("could not get information about the resource: %w", err)
		}
		res.Updated = append(res.Updated, info)
		if err := patchObject(helper, info, prev.Object, current.obj); err != nil {
			c.Log("error updating the resource %q:\n\t %v", info.Name, err)
			failed = append(failed, err.Error())
		}
		return nil
	})
	switch {
	case err != nil:
		return res, err
	case len(failed) > 0:
		return res, errors.New(strings.Join(failed, " && "))
	}
	if obsolete := original.Difference(target); len(obsolete) > 0 {
		// Helm deletes them, skipping those marked helm.sh/resource-policy: keep.
		sub, err := c.Client.Update(obsolete, nil, false)
		if sub != nil {
			res.Deleted = append(res.Deleted, sub.Deleted...)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// liveObject is an object as read before it is patched.
type liveObject struct {
	obj runtime.Object
	err error
}

// liveReaders bounds the reads readLive makes at the same time.
const liveReaders = 8

// readLive reads the objects, several at a time (reads have no order to keep).
func readLive(infos kube.ResourceList) map[*resource.Info]liveObject {
	out := make(map[*resource.Info]liveObject, len(infos))
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, liveReaders)
	for _, info := range infos {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			obj, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
			mu.Lock()
			defer mu.Unlock()
			out[info] = liveObject{obj: obj, err: err}
		}()
	}
	wg.Wait()
	return out
}

// patchObject patches the live object from the previous revision's
// manifest to the new one, as Helm does; nothing is sent for an empty
// patch, and info is refreshed from what the server holds.
func patchObject(helper *resource.Helper, info *resource.Info, prev, live runtime.Object) error {
	patch, patchType, err := helmPatch(info, prev, live)
	if err != nil {
		return fmt.Errorf("failed to create patch: %w", err)
	}
	if patch == nil || string(patch) == "{}" {
		return info.Refresh(live, true)
	}
	obj, err := helper.Patch(info.Namespace, info.Name, patchType, patch, nil)
	if err != nil {
		return fmt.Errorf("cannot patch %q with kind %s: %w", info.Name, info.Mapping.GroupVersionKind.Kind, err)
	}
	return info.Refresh(obj, true)
}

// helmPatch is the patch Helm's kube client computes for an update
// without three-way merge of unstructured objects (kube.Client.Update).
func helmPatch(target *resource.Info, prev, live runtime.Object) ([]byte, types.PatchType, error) {
	oldData, err := json.Marshal(prev)
	if err != nil {
		return nil, types.StrategicMergePatchType, fmt.Errorf("serializing current configuration: %w", err)
	}
	newData, err := json.Marshal(target.Object)
	if err != nil {
		return nil, types.StrategicMergePatchType, fmt.Errorf("serializing target configuration: %w", err)
	}
	versioned := kube.AsVersioned(target)
	_, unstructured := versioned.(runtime.Unstructured)
	_, crd := versioned.(*apiextv1beta1.CustomResourceDefinition)
	if unstructured || crd {
		patch, err := jsonpatch.CreateMergePatch(oldData, newData)
		return patch, types.MergePatchType, err
	}
	liveData, err := json.Marshal(live)
	if err != nil {
		return nil, types.StrategicMergePatchType, fmt.Errorf("serializing live configuration: %w", err)
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(versioned)
	if err != nil {
		return nil, types.StrategicMergePatchType, fmt.Errorf("unable to create patch metadata from object: %w", err)
	}
	patch, err := strategicpatch.CreateThreeWayMergePatch(oldData, newData, liveData, meta, true)
	return patch, types.StrategicMergePatchType, err
}
