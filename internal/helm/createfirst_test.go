package helm

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestOwnedByReleaseIsHelmsCheck(t *testing.T) {
	object := func(labels, annotations map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind("ConfigMap")
		u.SetName("web-config")
		u.SetLabels(labels)
		u.SetAnnotations(annotations)
		return u
	}
	marks := map[string]string{"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "team"}
	helm := map[string]string{"app.kubernetes.io/managed-by": "Helm"}
	desired := object(map[string]string{"app.kubernetes.io/managed-by": "Helm", "app": "web"}, marks)
	for _, tc := range []struct {
		name string
		live *unstructured.Unstructured
		want string
	}{
		{"the release's", object(helm, marks), ""},
		{"the release's, with more labels", object(map[string]string{"app.kubernetes.io/managed-by": "Helm", "tier": "x"}, map[string]string{"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "team", "note": "y"}), ""},
		{"made by hand", object(nil, nil),
			`invalid ownership metadata; label validation error: missing key "app.kubernetes.io/managed-by": must be set to "Helm"; annotation validation error: missing key "meta.helm.sh/release-name": must be set to "web"; annotation validation error: missing key "meta.helm.sh/release-namespace": must be set to "team"`},
		{"another release's", object(helm, map[string]string{"meta.helm.sh/release-name": "db", "meta.helm.sh/release-namespace": "team"}),
			`invalid ownership metadata; annotation validation error: key "meta.helm.sh/release-name" must equal "web": current value is "db"`},
		{"another namespace's release", object(helm, map[string]string{"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": "other"}),
			`invalid ownership metadata; annotation validation error: key "meta.helm.sh/release-namespace" must equal "team": current value is "other"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := ownedByRelease(tc.live, desired); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestPresumedAbsentAnswersNotFoundUntilTheFirstWrite(t *testing.T) {
	f := &createFirst{}
	_, err := absent.Get().Resource("configmaps").Namespace("team").Name("web").DoRaw(t.Context())
	if !apierrors.IsNotFound(err) {
		t.Fatalf("presumed absent: got %v, want NotFound", err)
	}
	if f.writing() {
		t.Fatal("writing before any write")
	}
	if !f.write() || f.write() {
		t.Fatal("write must report the first write only")
	}
}

func TestUnauthorizedIsRBACNotAdmission(t *testing.T) {
	services := schema.GroupResource{Resource: "services"}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"RBAC", apierrors.NewForbidden(services, "web", errors.New(`User "system:serviceaccount:team:deployer" cannot create resource "services" in API group "" in the namespace "team"`)), true},
		{"escalation", apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "rolebindings"}, "web",
			errors.New(`user "system:serviceaccount:team:deployer" (groups=["system:serviceaccounts" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`+"\n"+`{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`)), true},
		{"aggregationRule", apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}, "web",
			errors.New("must have cluster-admin privileges to use the aggregationRule")), true},
		{"not a resource", apierrors.NewForbidden(schema.GroupResource{}, "", errors.New(`User "jane" cannot get path "/metrics"`)), true},
		{"quota", apierrors.NewForbidden(services, "web", errors.New("exceeded quota: no-services, requested: services=1, used: services=0, limited: services=0")), false},
		{"policy", apierrors.NewForbidden(services, "web", errors.New(`admission webhook "policy.example" denied the request`)), false},
		{"not forbidden", apierrors.NewAlreadyExists(services, "web"), false},
	} {
		if got := unauthorized(tc.err); got != tc.want {
			t.Errorf("%s: unauthorized(%q) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
