package release

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestUpgrade(t *testing.T) {
	released := func(data string) func(m *machine) {
		return func(m *machine) { m.run(5); m.setSpec(data) }
	}
	runActionCases(t, []actionCase{
		{name: "upgrades", setup: released("v2"), want: "OutOfSync/Upgrade", events: []string{"Normal UpgradeSucceeded"},
			conds: map[string]string{"Released": "True UpgradeSucceeded", "Remediated": ""}, lastAction: "Upgrade"},
		{name: "a failed upgrade counts toward remediation", setup: released("fail-me"), want: "OutOfSync/Upgrade!",
			events: []string{"Warning UpgradeFailed"}, conds: map[string]string{"Released": "False UpgradeFailed"},
			failures: 1, lastAction: "Upgrade"},
		{name: "a transient error retries the step", setup: released("v2"),
			fail: map[string]error{"Upgrade": apierrors.NewTooManyRequests("slow down", 1)},
			want: "OutOfSync/Upgrade!", events: []string{"Warning TransientError"}, stepErr: true, lastAction: "Install"},
	})
}
