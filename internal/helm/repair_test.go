package helm

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// managed is a managedFields entry of manager over fieldsV1 JSON.
func managed(manager, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// The original of a repaired merge is the live object as far as the
// manifests reach: the list entries they name by merge key, and those no
// revision names that only this operator wrote (merged away); never what
// others own (clusterIP, a label, status, a sidecar container, another
// owner's reference, a finalizer).
func TestTouchedIsLiveWhereTheManifestsReach(t *testing.T) {
	svc := func(port int32) *corev1.Service {
		return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port}}}}
	}
	deploy := func(port int32, containers ...string) *appsv1.Deployment {
		d := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Finalizers: []string{"ours"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "App", Name: "web", UID: "u-cr"}}}}
		for _, c := range containers {
			d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: c, Image: c + ":1",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: port}}})
		}
		return d
	}
	liveSvc := func(manager string) *corev1.Service {
		live := svc(8080)
		live.Labels["team"] = "theirs"
		live.ResourceVersion = "42"
		live.Spec.ClusterIP = "10.0.0.7"
		live.Spec.Ports[0].Protocol, live.Spec.Ports[0].TargetPort = corev1.ProtocolTCP, intstr.FromInt32(8080)
		live.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}
		live.ManagedFields = []metav1.ManagedFieldsEntry{managed(manager, `{"f:spec":{"f:ports":{"k:{\"port\":8080,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}`)}
		return live
	}
	liveDeploy := func() *appsv1.Deployment {
		live := deploy(8080, "web", "sidecar")
		live.Spec.Template.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
		live.Spec.Template.Spec.Containers[0].Ports[0].Protocol = corev1.ProtocolTCP
		live.Finalizers = append(live.Finalizers, "theirs")
		live.OwnerReferences = append(live.OwnerReferences, metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "other", UID: "u-other"})
		live.ManagedFields = []metav1.ManagedFieldsEntry{
			managed(fieldManager(), `{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{}}}}}}}}`),
			managed("injector", `{"f:metadata":{"f:finalizers":{"v:\"theirs\"":{}},"f:ownerReferences":{"k:{\"uid\":\"u-other\"}":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"sidecar\"}":{".":{}}}}}}}`),
		}
		return live
	}
	ref := map[string]any{"apiVersion": "v1", "kind": "App", "name": "web", "uid": "u-cr"}
	tests := []struct {
		name        string
		live, a, b  runtime.Object
		wantMeta    map[string]any
		wantSpec    map[string]any
		patchStruct any
	}{
		{"a port only this operator wrote (an action that lost its record): merged away",
			liveSvc(fieldManager()), svc(80), svc(9090),
			map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
			map[string]any{"ports": []any{map[string]any{"port": float64(8080), "protocol": "TCP", "targetPort": float64(8080)}}},
			corev1.Service{}},
		{"a port someone else wrote: theirs",
			liveSvc("kubectl-edit"), svc(80), svc(9090),
			map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
			map[string]any{"ports": []any{}},
			corev1.Service{}},
		{"a sidecar, another owner, a finalizer: theirs; an unnamed port of ours: merged away",
			liveDeploy(), deploy(80, "web"), deploy(9090, "web"),
			map[string]any{"name": "web", "finalizers": []any{"ours"}, "ownerReferences": []any{ref}},
			map[string]any{"selector": nil, "strategy": map[string]any{}, "template": map[string]any{"metadata": map[string]any{}, "spec": map[string]any{"containers": []any{
				map[string]any{"name": "web", "image": "web:1", "resources": map[string]any{},
					"ports": []any{map[string]any{"name": "http", "containerPort": float64(8080), "protocol": "TCP"}}}}}}},
			appsv1.Deployment{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta, err := strategicpatch.NewPatchMetaFromStruct(tt.patchStruct)
			if err != nil {
				t.Fatal(err)
			}
			got, err := touched(tt.live, tt.a, tt.b, meta)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Object["metadata"], tt.wantMeta) {
				t.Errorf("metadata:\n%v\nwant:\n%v", got.Object["metadata"], tt.wantMeta)
			}
			if !reflect.DeepEqual(got.Object["spec"], tt.wantSpec) {
				t.Errorf("spec:\n%v\nwant:\n%v", got.Object["spec"], tt.wantSpec)
			}
			if _, ok := got.Object["status"]; ok {
				t.Errorf("status kept: %v", got.Object["status"])
			}
		})
	}
}
