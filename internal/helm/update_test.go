package helm

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The previous manifest stands for an object nobody changed only with the
// marks Helm sets when it applies: without them, every such object would
// get a patch adding them.
func TestAsAppliedAddsHelmMarksOnly(t *testing.T) {
	prev := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"app": "a"}}, Data: map[string]string{"k": "v1"}}
	target := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c",
		Labels:      map[string]string{"app": "b", "app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{"meta.helm.sh/release-name": "r", "meta.helm.sh/release-namespace": "ns", "other": "x"},
	}, Data: map[string]string{"k": "v2"}}
	got := asApplied(prev, target).(*corev1.ConfigMap)
	if got.Labels["app"] != "a" || got.Labels["app.kubernetes.io/managed-by"] != "Helm" || len(got.Labels) != 2 {
		t.Errorf("labels %v", got.Labels)
	}
	if got.Annotations["meta.helm.sh/release-name"] != "r" || got.Annotations["meta.helm.sh/release-namespace"] != "ns" || len(got.Annotations) != 2 {
		t.Errorf("annotations %v", got.Annotations)
	}
	if got.Data["k"] != "v1" {
		t.Errorf("data %v, want the previous manifest's", got.Data)
	}
	if len(prev.Labels) != 1 || prev.Annotations != nil {
		t.Errorf("the previous manifest's object was changed: %v %v", prev.Labels, prev.Annotations)
	}
}
