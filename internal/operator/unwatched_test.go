package operator

import (
	"context"
	"reflect"
	"testing"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func releaseSecret(ns, name, version, kind string) client.Object {
	l := map[string]string{"owner": "helm", "name": name, "version": version, api.LabelManaged: "true"}
	if kind != "" {
		l[api.LabelOwnerKind] = kind
	}
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sh.helm.release.v1." + name + ".v" + version, Labels: l}}
}

func TestUnwatchedReportFindsReleasesOfKindsNotWatched(t *testing.T) {
	objs := []client.Object{
		releaseSecret("a", "web", "1", "WebApp.apps.example.com"),
		releaseSecret("a", "web", "2", "WebApp.apps.example.com"), // two revisions, one release
		releaseSecret("b", "web", "1", "WebApp.apps.example.com"),
		releaseSecret("a", "db", "1", "Database.apps.example.com"), // watched
		releaseSecret("a", "old", "1", ""),                         // made before the label: unknown
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "plain"}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(objs...).Build()
	ws := []watches.Watch{{Group: "apps.example.com", Version: "v1", Kind: "Database"}}
	for _, tc := range []struct {
		name       string
		namespaces []string
		want       map[string][]string
	}{
		{"all namespaces", nil, map[string][]string{"WebApp.apps.example.com": {"a/web", "b/web"}}},
		{"watched namespaces only", []string{"b"}, map[string][]string{"WebApp.apps.example.com": {"b/web"}}},
		{"nothing there", []string{"c"}, map[string][]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unwatchedReport{reader: c, watches: ws, namespaces: tc.namespaces, log: logr.Discard()}
			got, err := u.find(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
