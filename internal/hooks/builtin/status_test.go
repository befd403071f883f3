package builtin_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/hooks"
	"github.com/chartkeeper/chartkeeper/internal/hooks/builtin"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

func TestStatusFieldsCopyFromReleasedObjects(t *testing.T) {
	env := testenv.Cluster(t)
	ns := env.Namespace(t)
	req := owner(t, env, ns, "web", nil)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8443}}}}
	if err := env.Client.Create(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	rel := hooks.Release{Name: "web", Namespace: ns, Objects: []hooks.ObjectRef{
		{GVK: corev1.SchemeGroupVersion.WithKind("Service"), Namespace: ns, Name: "web"},
	}}
	h := &builtin.StatusFields{Fields: []builtin.StatusField{
		{Name: "clusterIP", Kind: "Service", Path: "{.spec.clusterIP}"},
		{Name: "port", Kind: "Service", Path: "{.spec.ports[0].port}"},
		{Name: "gone", Kind: "Deployment", Path: "{.status.readyReplicas}"},
		{Name: "absentField", Kind: "Service", Path: "{.status.loadBalancer.ingress[0].ip}"},
	}}
	req.AppStatus["gone"] = 3
	if _, err := h.PostRelease(context.Background(), req, rel); err != nil {
		t.Fatal(err)
	}
	if ip, _ := req.AppStatus["clusterIP"].(string); ip == "" || req.AppStatus["port"] != int64(8443) {
		t.Errorf("status.app %v", req.AppStatus)
	}
	if _, ok := req.AppStatus["gone"]; ok {
		t.Error("a field of a missing object was kept")
	}
	if _, ok := req.AppStatus["absentField"]; ok {
		t.Error("a missing field was set")
	}
	bad := &builtin.StatusFields{Fields: []builtin.StatusField{{Name: "x", Kind: "Service", Path: "{.spec["}}}
	if _, err := bad.PostRelease(context.Background(), req, rel); err == nil {
		t.Error("a malformed path is not an error")
	}
}
