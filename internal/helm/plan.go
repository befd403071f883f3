package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// ChangeAction is what an upgrade would do to one object.
type ChangeAction string

// The changes a plan lists.
const (
	ChangeCreate ChangeAction = "Create"
	ChangeUpdate ChangeAction = "Update"
	ChangeDelete ChangeAction = "Delete"
	// ChangeKeep: the chart drops the object, and helm.sh/resource-policy:
	// keep leaves it in place.
	ChangeKeep ChangeAction = "Keep"
)

// Plan is what an upgrade would change, as the API server answers dry runs
// of its writes against the live objects: nothing is stored or applied.
type Plan struct {
	// From is the revision the upgrade would start from.
	From int
	// Changes lists the objects the upgrade would create, change, delete or
	// keep, in the new manifest's order, then the dropped ones; objects it
	// would leave as they are are not listed.
	Changes []Change
}

// Change is one object of a plan.
type Change struct {
	Action    ChangeAction
	GVK       schema.GroupVersionKind
	Namespace string
	Name      string
	// Before is the object as the API server holds it (nil for a create);
	// After as it would hold it once the upgrade wrote it (nil for a delete
	// or keep). Both are as the server answered, status and metadata
	// included: the caller decides what to compare and show.
	Before, After *unstructured.Unstructured
}

// Plan renders the upgrade r describes, as Upgrade would, and asks the
// API server what applying it would change: a dry-run create of each new
// object, a dry-run patch (Helm's own patch: see helmPatch) of each kept
// one, and the objects the new revision drops. It stores nothing, applies
// nothing, and runs no chart hook; r.PostRenderer must not act beyond
// rendering (no CRD applied).
func (c *Client) Plan(ctx context.Context, r Request) (*Plan, error) {
	cfg, err := c.config(ctx, r.Namespace, r.MaxHistory, r.Guard)
	if err != nil {
		return nil, err
	}
	current, err := deployedOrLast(cfg, r.Name)
	if err != nil {
		return nil, err
	}
	up := c.newUpgrade(cfg, r)
	up.DryRun, up.DryRunOption = true, "server" // rendered with lookup, as the upgrade would be
	ctx, cancel := Bound(ctx, r.Timeout)
	defer cancel()
	rel, err := up.RunWithContext(ctx, r.Name, r.Chart, r.Values)
	if err != nil {
		return nil, ExplainAs(err, r.As)
	}
	original, err := cfg.KubeClient.Build(bytes.NewBufferString(current.Manifest), false)
	if err != nil {
		return nil, fmt.Errorf("reading revision %d's objects: %w", current.Version, err)
	}
	original = withoutCRDs(original)
	target, err := cfg.KubeClient.Build(bytes.NewBufferString(rel.Manifest), false)
	if err != nil {
		return nil, fmt.Errorf("reading the upgrade's objects: %w", err)
	}
	p := &Plan{From: current.Version}
	live := readLive(target)
	for _, info := range target {
		ch, err := planObject(info, original.Get(info), live[info])
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", info.Mapping.GroupVersionKind.Kind, info.Name, err)
		}
		if ch != nil {
			p.Changes = append(p.Changes, *ch)
		}
	}
	for _, info := range original.Difference(target) {
		ch := Change{Action: ChangeDelete, GVK: info.Mapping.GroupVersionKind, Namespace: info.Namespace, Name: info.Name}
		if u, ok := info.Object.(*unstructured.Unstructured); ok && ownership.Kept(u.GetAnnotations()) {
			ch.Action = ChangeKeep
		}
		obj, err := resource.NewHelper(info.Client, info.Mapping).Get(info.Namespace, info.Name)
		switch {
		case apierrors.IsNotFound(err):
			continue // already gone: nothing to delete
		case err != nil:
			return nil, fmt.Errorf("%s %s: %w", ch.GVK.Kind, ch.Name, err)
		}
		ch.Before = asUnstructured(obj)
		p.Changes = append(p.Changes, ch)
	}
	return p, nil
}

// planObject asks the API server what writing one object of the new
// manifest would do: nil when nothing would change.
func planObject(info *resource.Info, prev *resource.Info, cur liveObject) (*Change, error) {
	ch := &Change{GVK: info.Mapping.GroupVersionKind, Namespace: info.Namespace, Name: info.Name}
	helper := resource.NewHelper(info.Client, info.Mapping).WithFieldManager(kube.ManagedFieldsManager).DryRun(true)
	if apierrors.IsNotFound(cur.err) {
		obj, err := helper.Create(info.Namespace, true, info.Object)
		if err != nil {
			return nil, fmt.Errorf("dry-run create: %w", err)
		}
		ch.Action, ch.After = ChangeCreate, asUnstructured(obj)
		return ch, nil
	}
	if cur.err != nil {
		return nil, cur.err
	}
	prevObj := cur.obj // new in this revision but present: Helm patches it from what is there
	if prev != nil {
		prevObj = prev.Object
	}
	patch, patchType, err := helmPatch(info, prevObj, cur.obj)
	if err != nil {
		return nil, fmt.Errorf("computing the patch: %w", err)
	}
	if patch == nil || string(patch) == "{}" {
		return nil, nil
	}
	obj, err := helper.Patch(info.Namespace, info.Name, patchType, patch, nil)
	if err != nil {
		return nil, fmt.Errorf("dry-run patch: %w", err)
	}
	ch.Action, ch.Before, ch.After = ChangeUpdate, asUnstructured(cur.obj), asUnstructured(obj)
	return ch, nil
}

// asUnstructured converts what a REST helper returned.
func asUnstructured(obj runtime.Object) *unstructured.Unstructured {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		return u
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return &unstructured.Unstructured{Object: map[string]any{}}
	}
	return &unstructured.Unstructured{Object: m}
}

// deployedOrLast is the revision an upgrade starts from, as Helm's
// upgrade picks it: the latest if deployed, else the deployed one, else a
// failed or superseded latest.
func deployedOrLast(cfg *action.Configuration, name string) (*release.Release, error) {
	last, err := cfg.Releases.Last(name)
	if err != nil {
		return nil, err
	}
	if last.Info.Status == release.StatusDeployed {
		return last, nil
	}
	dep, err := cfg.Releases.Deployed(name)
	if errors.Is(err, driver.ErrNoDeployedReleases) && (last.Info.Status == release.StatusFailed || last.Info.Status == release.StatusSuperseded) {
		return last, nil
	}
	return dep, err
}
