package metrics

import (
	"errors"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestObserveOutcome(t *testing.T) {
	failures.Reset()
	remediations.Reset()
	boom := errors.New("boom")
	for _, o := range []struct {
		kind, action string
		remediation  bool
		err          error
	}{
		{"WebApp", "Install", false, nil},
		{"WebApp", "Install", false, boom},
		{"WebApp", "Upgrade", false, boom},
		{"WebApp", "Rollback", true, nil},
		{"WebApp", "Uninstall", true, boom},
		{"EtcdCluster", "Rollback", true, nil},
	} {
		ObserveOutcome(o.kind, o.action, o.remediation, o.err)
	}
	tests := []struct {
		name string
		c    prometheus.Collector
		want string
	}{
		{"chartkeeper_action_failures_total", failures, `# HELP chartkeeper_action_failures_total ` + failuresHelp + `
# TYPE chartkeeper_action_failures_total counter
chartkeeper_action_failures_total{action="Install",kind="WebApp"} 1
chartkeeper_action_failures_total{action="Uninstall",kind="WebApp"} 1
chartkeeper_action_failures_total{action="Upgrade",kind="WebApp"} 1
`},
		{"chartkeeper_remediations_total", remediations, `# HELP chartkeeper_remediations_total ` + remediationsHelp + `
# TYPE chartkeeper_remediations_total counter
chartkeeper_remediations_total{action="Rollback",kind="EtcdCluster",result="success"} 1
chartkeeper_remediations_total{action="Rollback",kind="WebApp",result="success"} 1
chartkeeper_remediations_total{action="Uninstall",kind="WebApp",result="failure"} 1
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := testutil.CollectAndCompare(tt.c, strings.NewReader(tt.want), tt.name); err != nil {
				t.Error(err)
			}
		})
	}
}
