package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"

	"helm.sh/helm/v3/pkg/chart"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/helm"
)

// floor writes what an operator must write for each release and nothing
// else, with no decisions, no reads and no rendering on the clock: the
// release Secret, the released objects and one status update per change,
// from Concurrency writers. Its times are the control plane's floor for the
// work the operators do.
//
// Per release it writes, on install: each object (create), the deployed
// revision's Secret, the status. On upgrade: each object whose manifest
// changed (merge patch), the old revision's Secret (superseded), the new
// one, the status. On delete: each object and each revision's Secret. The
// records follow the objects, as Helm's do (until 2026-11-28 the floor
// wrote them first, reaching its "deployed" milestone after one or two of
// its five writes per release, an operator after all of them).
type floor struct {
	cs     kubernetes.Interface
	dyn    dynamic.Interface
	mapper meta.RESTMapper
	// gvr is the custom resources' resource, for their status.
	gvr schema.GroupVersionResource
	// releases are rendered before the clock starts: [key][revision-1].
	releases map[key][]*release.Release
	workers  int
}

// renderReleases installs and upgrades every key's release into Helm's
// memory storage, the way the operators store them, so the floor writes
// the same Secrets. The values are the scenario's specs.
func renderReleases(ch *chart.Chart, sc Scenario, keys []key) (map[key][]*release.Release, error) {
	out := map[key][]*release.Release{}
	for _, k := range keys {
		st := storage.Init(driver.NewMemory())
		hc := helm.NewOffline(st, &kubefake.PrintingKubeClient{Out: io.Discard})
		values1, values2 := sc.values()
		req := helm.Request{Name: k.Name, Namespace: k.Namespace, Chart: ch, Values: values1, MaxHistory: 10}
		v1, err := hc.Install(context.Background(), req)
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", k, err)
		}
		v1 = copyRelease(v1)
		req.Values = values2
		v2, err := hc.Upgrade(context.Background(), req)
		if err != nil {
			return nil, fmt.Errorf("rendering %s revision 2: %w", k, err)
		}
		out[k] = []*release.Release{v1, v2}
	}
	return out, nil
}

// releasedResources are the resources the scenario's chart releases, in
// either revision, mapped through discovery: what the observer watches.
func releasedResources(ch *chart.Chart, sc Scenario, mapper meta.RESTMapper) ([]schema.GroupVersionResource, error) {
	k := key{Namespace: "bench-render", Name: "bench-render"}
	rels, err := renderReleases(ch, sc, []key{k})
	if err != nil {
		return nil, err
	}
	var out []schema.GroupVersionResource
	for _, r := range rels[k] {
		objs, err := objects(r)
		if err != nil {
			return nil, err
		}
		for _, u := range objs {
			gvk := u.GroupVersionKind()
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, m.Resource) {
				out = append(out, m.Resource)
			}
		}
	}
	return out, nil
}

// copyRelease keeps revision 1 as it was when deployed: the upgrade
// marks the stored one superseded.
func copyRelease(r *release.Release) *release.Release {
	c := *r
	info := *r.Info
	c.Info = &info
	return &c
}

func secretKey(r *release.Release) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", r.Name, r.Version)
}

// objects decodes a release's manifest.
func objects(r *release.Release) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range releaseutil.SplitManifests(r.Manifest) {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			return nil, err
		}
		if len(u.Object) > 0 {
			u.SetNamespace(r.Namespace)
			out = append(out, u)
		}
	}
	return out, nil
}

func (f *floor) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := f.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	return f.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), nil
}

func (f *floor) secrets(ns string) *driver.Secrets {
	return driver.NewSecrets(f.cs.CoreV1().Secrets(ns))
}

func (f *floor) status(ctx context.Context, k key, r *release.Release) error {
	body, err := json.Marshal(map[string]any{"status": map[string]any{
		"release": map[string]any{"name": r.Name, "revision": r.Version, "status": r.Info.Status.String()},
	}})
	if err != nil {
		return err
	}
	_, err = f.dyn.Resource(f.gvr).Namespace(k.Namespace).Patch(ctx, k.Name, types.MergePatchType, body, metav1.PatchOptions{}, "status")
	return err
}

// install writes revision 1 of k's release: its objects, then its record
// (a revision recorded deployed is one whose objects were applied), then
// the status.
func (f *floor) install(ctx context.Context, k key) error {
	r := f.releases[k][0]
	objs, err := objects(r)
	if err != nil {
		return err
	}
	for _, u := range objs {
		ri, err := f.resource(u)
		if err != nil {
			return err
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{FieldManager: "bench-floor"}); err != nil {
			return err
		}
	}
	if err := f.secrets(k.Namespace).Create(secretKey(r), r); err != nil {
		return err
	}
	return f.status(ctx, k, r)
}

// upgrade writes revision 2 of k's release: the changed objects, then the
// records (the old revision superseded, the new one deployed), then the
// status.
func (f *floor) upgrade(ctx context.Context, k key) error {
	old, cur := copyRelease(f.releases[k][0]), f.releases[k][1]
	old.Info.Status = release.StatusSuperseded
	before, err := objects(old)
	if err != nil {
		return err
	}
	after, err := objects(cur)
	if err != nil {
		return err
	}
	// A release's manifest does not keep its objects in one order from
	// revision to revision: they are matched by kind and name.
	unchanged := map[string]*unstructured.Unstructured{}
	for _, u := range before {
		unchanged[objectID(u)] = u
	}
	for _, u := range after {
		if b, ok := unchanged[objectID(u)]; ok && equalJSON(b.Object, u.Object) {
			continue
		}
		ri, err := f.resource(u)
		if err != nil {
			return err
		}
		body, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		if _, err := ri.Patch(ctx, u.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: "bench-floor"}); err != nil {
			return err
		}
	}
	s := f.secrets(k.Namespace)
	if err := s.Update(secretKey(old), old); err != nil {
		return err
	}
	if err := s.Create(secretKey(cur), cur); err != nil {
		return err
	}
	return f.status(ctx, k, cur)
}

// uninstall deletes k's objects and stored revisions.
func (f *floor) uninstall(ctx context.Context, k key) error {
	objs, err := objects(f.releases[k][1])
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	for _, u := range objs {
		ri, err := f.resource(u)
		if err != nil {
			return err
		}
		if err := ri.Delete(ctx, u.GetName(), metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	for _, r := range f.releases[k] {
		if err := f.cs.CoreV1().Secrets(k.Namespace).Delete(ctx, secretKey(r), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// objectID names an object of a release: its group, kind and name.
func objectID(u *unstructured.Unstructured) string {
	return u.GroupVersionKind().GroupKind().String() + "/" + u.GetName()
}

func equalJSON(a, b map[string]any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// pipeline runs the harness's change of each custom resource, then the
// floor's writes for it, as an operator with a perfect watch would: one of
// the floor's writers takes each key as soon as its custom resource changed.
func (f *floor) pipeline(ctx context.Context, keys []key, change, write func(context.Context, key) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	queue := make(chan key, len(keys))
	var wg sync.WaitGroup
	for range f.workers {
		wg.Go(func() {
			for k := range queue {
				if ctx.Err() != nil {
					continue
				}
				if err := write(ctx, k); err != nil {
					cancel(fmt.Errorf("%s: %w", k, err))
				}
			}
		})
	}
	err := forEach(ctx, keys, writers, func(ctx context.Context, k key) error {
		if err := change(ctx, k); err != nil {
			return err
		}
		queue <- k
		return nil
	})
	close(queue)
	wg.Wait()
	if err != nil {
		return err
	}
	return context.Cause(ctx)
}
