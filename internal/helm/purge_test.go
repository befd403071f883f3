package helm

import (
	"context"
	"io"
	"slices"
	"strconv"
	"testing"

	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// An uninstall deletes the release's history with one deletecollection of
// its Secrets when Helm's Secret driver stored them; otherwise (chunked
// storage, a hook that made Helm write the uninstalling revision, RBAC
// without deletecollection) one revision at a time, as Helm does. Either
// way no revision is left.
func TestUninstallDeletesTheHistoryInOneRequest(t *testing.T) {
	for _, c := range []struct {
		name         string
		storage      Storage
		hooks        bool
		forbidden    bool // deletecollection of Secrets is forbidden
		impostor     bool // an Opaque Secret labelled as the release's
		wantCollect  int  // deletecollection requests
		wantDeletes  int  // delete requests
		wantRejected int  // deletecollection requests refused
	}{
		{"secret storage", StorageSecret, false, false, false, 1, 0, 0},
		{"deletecollection forbidden", StorageSecret, false, true, false, 0, 3, 1},
		{"chunked storage", StorageChunked, false, false, false, 0, 3, 0},
		{"uninstall hooks", StorageSecret, true, false, false, 0, 3, 0},
		{"a Secret of another type labelled as a revision", StorageSecret, false, false, true, 0, 3, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := fake.NewClientset()
			var collects, deletes, rejected int
			// The API server's resourceVersions, which the fake does not keep.
			var rv uint64
			stamp := func(a k8stesting.Action) (bool, runtime.Object, error) {
				rv++
				a.(interface{ GetObject() runtime.Object }).GetObject().(*corev1.Secret).ResourceVersion = strconv.FormatUint(rv, 10)
				return false, nil, nil
			}
			cs.PrependReactor("create", "secrets", stamp)
			cs.PrependReactor("update", "secrets", stamp)
			cs.PrependReactor("delete-collection", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if c.forbidden {
					rejected++
					return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "", nil)
				}
				collects++
				// Its list need be no fresher than the revisions: a consistent
				// one waits for the watch cache to catch up with etcd.
				lo := a.(k8stesting.DeleteCollectionActionImpl).ListOptions
				if want := strconv.FormatUint(rv, 10); lo.ResourceVersion != want || lo.ResourceVersionMatch != metav1.ResourceVersionMatchNotOlderThan {
					t.Errorf("deletecollection lists at resourceVersion %q (%q), want %q (NotOlderThan): the newest revision's", lo.ResourceVersion, lo.ResourceVersionMatch, want)
				}
				r := a.(k8stesting.DeleteCollectionAction).GetListRestrictions()
				return true, nil, deleteMatching(cs, a.GetNamespace(), r.Labels, r.Fields)
			})
			cs.PrependReactor("delete", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) {
				deletes++
				return false, nil, nil
			})
			// An unrelated Secret, and another release's, are left alone.
			kept := []*corev1.Secret{
				{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns", Labels: map[string]string{"name": "web"}}},
				{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.webby.v1", Namespace: "ns", Labels: map[string]string{"owner": "helm", "name": "webby"}}, Type: releaseSecretType},
			}
			if c.impostor {
				kept = append(kept, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-notes", Namespace: "ns", Labels: map[string]string{"owner": "helm", "name": "web"}}})
			}
			for _, s := range kept {
				if _, err := cs.CoreV1().Secrets("ns").Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			st := newStorage(cs.CoreV1().Secrets("ns"), c.storage, func(string, ...any) {})
			hc := NewOffline(st, &kubefake.PrintingKubeClient{Out: io.Discard})
			ctx := context.Background()
			req := Request{Name: "web", Namespace: "ns", Chart: appChart(c.hooks), Values: map[string]any{"v": "1"}}
			for _, v := range []string{"1", "2", "3"} {
				req.Values = map[string]any{"v": v}
				var err error
				if v == "1" {
					_, err = hc.Install(ctx, req)
				} else {
					_, err = hc.Upgrade(ctx, req)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			deletes = 0
			if err := hc.Uninstall(ctx, "web", "ns", "bye", Guard{}); err != nil {
				t.Fatal(err)
			}
			if collects != c.wantCollect || deletes != c.wantDeletes || rejected != c.wantRejected {
				t.Errorf("deletecollection %d, delete %d, refused %d; want %d, %d, %d", collects, deletes, rejected, c.wantCollect, c.wantDeletes, c.wantRejected)
			}
			list, err := cs.CoreV1().Secrets("ns").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, s := range list.Items {
				left = append(left, s.Name)
			}
			if len(left) != len(kept) {
				t.Errorf("Secrets left: %v, want the %d that are not the release's", left, len(kept))
			}
			for _, s := range kept {
				if !slices.Contains(left, s.Name) {
					t.Errorf("Secret %s was deleted; left: %v", s.Name, left)
				}
			}
		})
	}
}

// deleteMatching is the API server's deletecollection, which the fake
// clientset does not implement.
func deleteMatching(cs *fake.Clientset, ns string, sel labels.Selector, fsel fields.Selector) error {
	list, err := cs.Tracker().List(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, schema.GroupVersionKind{Version: "v1", Kind: "Secret"}, ns)
	if err != nil {
		return err
	}
	for _, s := range list.(*corev1.SecretList).Items {
		if sel.Matches(labels.Set(s.Labels)) && (fsel == nil || fsel.Matches(secretFields(s.Namespace, s.Name, s.Type))) {
			if err := cs.Tracker().Delete(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, ns, s.Name); err != nil {
				return err
			}
		}
	}
	return nil
}
