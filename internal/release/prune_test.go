package release

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// leftover is a ConfigMap of the machine's release that no revision holds.
func leftover(name string) metav1.PartialObjectMetadata {
	m := metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name,
		Annotations: map[string]string{api.AnnotationOwner: "test.chartkeeper.dev/App/ns/app", helmReleaseName: "app", helmReleaseNamespace: "ns"}}}
	m.APIVersion, m.Kind = "v1", "ConfigMap"
	return m
}

func TestPrune(t *testing.T) {
	left := func(m *machine) {
		m.run(5)
		m.sc.leftovers = []metav1.PartialObjectMetadata{leftover("app-extra")}
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
	m.run(5)
	m.sc.leftovers = []metav1.PartialObjectMetadata{leftover("app-extra")}
	expectTrace(t, m.run(1), "Leftovers/Prune")
	if got := strings.Join(m.sc.writes, ","); got != "delete ConfigMap app-extra" {
		t.Errorf("writes %s", got)
	}
}
