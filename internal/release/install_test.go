package release

import (
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestInstall(t *testing.T) {
	runActionCases(t, []actionCase{
		{name: "installs", want: "Absent/Install", events: []string{"Normal InstallSucceeded"},
			conds:      map[string]string{"Released": "True InstallSucceeded", "Ready": "False Progressing", "Remediated": ""},
			lastAction: "Install"},
		{name: "a failed install counts toward remediation", setup: func(m *machine) { m.setSpec("fail-me") },
			want: "Absent/Install!", events: []string{"Warning InstallFailed"},
			conds: map[string]string{"Released": "False InstallFailed", "Stalled": ""}, failures: 1, lastAction: "Install"},
		{name: "an error before anything is stored is terminal", fail: map[string]error{"Install": errors.New("template: cm.yaml: boom")},
			want: "Absent/Install!", events: []string{"Warning ChartError"},
			conds: map[string]string{"Released": "False ChartError", "Ready": "False ChartError", "Stalled": "True ChartError"}, lastAction: "-"},
		{name: "a transient error retries the step", fail: map[string]error{"Install": apierrors.NewServiceUnavailable("etcd leader changed")},
			want: "Absent/Install!", events: []string{"Warning TransientError"}, stepErr: true, lastAction: "-"},
	})
}
