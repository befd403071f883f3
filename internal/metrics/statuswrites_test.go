package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestObserveStatusWrite(t *testing.T) {
	statusWrites.Reset()
	for _, w := range []struct {
		kind, reason string
		change       StatusChange
	}{
		{"WebApp", "Progressing", StatusChanged},
		{"WebApp", "Progressing", StatusReworded},
		{"WebApp", "Progressing", StatusReworded},
		{"WebApp", "Succeeded", StatusChanged},
		{"EtcdCluster", "", StatusChanged},
	} {
		ObserveStatusWrite(w.kind, w.reason, w.change)
	}
	want := `# HELP chartkeeper_status_writes_total ` + statusWritesHelp + `
# TYPE chartkeeper_status_writes_total counter
chartkeeper_status_writes_total{change="changed",kind="EtcdCluster",reason=""} 1
chartkeeper_status_writes_total{change="changed",kind="WebApp",reason="Progressing"} 1
chartkeeper_status_writes_total{change="changed",kind="WebApp",reason="Succeeded"} 1
chartkeeper_status_writes_total{change="reworded",kind="WebApp",reason="Progressing"} 2
`
	if err := testutil.CollectAndCompare(statusWrites, strings.NewReader(want), "chartkeeper_status_writes_total"); err != nil {
		t.Error(err)
	}
}
