package helm

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The original of a repaired merge is the live object as far as the
// manifests reach: the live port list whole (the port no revision names
// among it), not what others own (clusterIP, a label of theirs, status).
func TestTouchedIsLiveWhereTheManifestsReach(t *testing.T) {
	svc := func(port int32) *corev1.Service {
		return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: map[string]string{"app": "web"}},
			Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: port}}}}
	}
	live := svc(8080)
	live.Labels["team"] = "theirs"
	live.ResourceVersion = "42"
	live.Spec.ClusterIP = "10.0.0.7"
	live.Spec.Ports[0].Protocol, live.Spec.Ports[0].TargetPort = corev1.ProtocolTCP, intstr.FromInt32(8080)
	live.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: "1.2.3.4"}}

	got, err := touched(live, svc(80), svc(9090))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": float64(8080), "protocol": "TCP", "targetPort": float64(8080)}}},
	}
	if !reflect.DeepEqual(got.Object, want) {
		t.Errorf("touched:\n%v\nwant:\n%v", got.Object, want)
	}
}
