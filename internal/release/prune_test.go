package release

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

func TestPrune(t *testing.T) {
	left := func(m *machine) {
		m.run(5)
		extra := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-extra",
			Annotations: map[string]string{api.AnnotationOwner: "test.chartkeeper.dev/App/ns/app", helmReleaseName: "app", helmReleaseNamespace: "ns"}}}
		extra.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("ConfigMap"))
		extra.APIVersion, extra.Kind = "v1", "ConfigMap"
		m.sc.leftovers = []metav1.PartialObjectMetadata{extra}
	}
	runActionCases(t, []actionCase{
		{name: "deletes what an earlier revision left", setup: left, want: "Leftovers/Prune",
			events: []string{"Normal Pruned"}, conds: map[string]string{"Released": "True Pruned"}, lastAction: "Install"},
		{name: "a failed prune is not counted", setup: func(m *machine) {
			left(m)
			m.sc.writeErr = errors.New("configmaps is forbidden")
		}, want: "Leftovers/Prune!", events: []string{"Warning PruneFailed"},
			conds: map[string]string{"Released": "False PruneFailed"}, lastAction: "Install"},
	})
}

func TestPruneDeletesTheLeftovers(t *testing.T) {
	m := newMachine(t, nil)
	extra := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app-extra",
		Annotations: map[string]string{api.AnnotationOwner: "test.chartkeeper.dev/App/ns/app", helmReleaseName: "app", helmReleaseNamespace: "ns"}}}
	extra.APIVersion, extra.Kind = "v1", "ConfigMap"
	m.run(5)
	m.sc.leftovers = []metav1.PartialObjectMetadata{extra}
	expectTrace(t, m.run(1), "Leftovers/Prune")
	if got := strings.Join(m.sc.writes, ","); got != "delete ConfigMap app-extra" {
		t.Errorf("writes %s", got)
	}
}
