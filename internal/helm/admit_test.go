package helm

import (
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// recordingKube records what reaches the kube client.
type recordingKube struct {
	kube.Interface
	deleted, updated int
}

func (r *recordingKube) Delete(rl kube.ResourceList) (*kube.Result, []error) {
	r.deleted += len(rl)
	return &kube.Result{Deleted: rl}, nil
}

func (r *recordingKube) DeleteWithPropagationPolicy(rl kube.ResourceList, _ metav1.DeletionPropagation) (*kube.Result, []error) {
	return r.Delete(rl)
}

func (r *recordingKube) Update(_, target kube.ResourceList, _ bool) (*kube.Result, error) {
	r.updated += len(target)
	return &kube.Result{}, nil
}

func configMapInfo(ns, name string) *resource.Info {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	u.SetNamespace(ns)
	u.SetName(name)
	return &resource.Info{Name: name, Namespace: ns, Object: u, Mapping: &meta.RESTMapping{Scope: meta.RESTScopeNamespace}}
}

// A stored revision names what an uninstall deletes and what an upgrade
// or rollback starts from: each of those objects is admitted, and one out
// of scope stops the action before anything is sent.
func TestAdmitCoversStoredObjects(t *testing.T) {
	refuse := errors.New("outside")
	admit := func(p ownership.Placement) error {
		if p.Namespace != "team" {
			return refuse
		}
		return nil
	}
	inScope := kube.ResourceList{configMapInfo("team", "a")}
	forged := kube.ResourceList{configMapInfo("team", "a"), configMapInfo("kube-system", "x")}
	cases := []struct {
		name    string
		run     func(c kube.Interface) error
		refused bool
		deleted int
	}{
		{"delete in scope", func(c kube.Interface) error { _, errs := c.Delete(inScope); return errors.Join(errs...) }, false, 1},
		{"delete of a forged object: left alone", func(c kube.Interface) error { _, errs := c.Delete(forged); return errors.Join(errs...) }, false, 1},
		{"uninstall's delete of a forged object: left alone", func(c kube.Interface) error {
			_, errs := c.(kube.InterfaceDeletionPropagation).DeleteWithPropagationPolicy(forged, metav1.DeletePropagationBackground)
			return errors.Join(errs...)
		}, false, 1},
		{"update from a forged revision", func(c kube.Interface) error { _, err := c.Update(forged, inScope, false); return err }, true, 0},
		{"update in scope", func(c kube.Interface) error { _, err := c.Update(inScope, inScope, false); return err }, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingKube{}
			err := tc.run(withAdmit(rec, admit))
			if got := errors.Is(err, refuse); got != tc.refused {
				t.Fatalf("refused %v (%v), want %v", got, err, tc.refused)
			}
			if tc.refused && rec.deleted+rec.updated > 0 {
				t.Errorf("a refused action reached the cluster: %d deleted, %d updated", rec.deleted, rec.updated)
			}
			if rec.deleted != tc.deleted {
				t.Errorf("%d objects deleted, want %d (none outside the scope)", rec.deleted, tc.deleted)
			}
		})
	}
}
