package release

import (
	"errors"
	"testing"

	helmrelease "helm.sh/helm/v3/pkg/release"
)

func TestUnlock(t *testing.T) {
	interrupted := func(m *machine) {
		m.run(5)
		rel, err := m.store.Last("app")
		if err != nil {
			m.t.Fatal(err)
		}
		rel.Info.Status = helmrelease.StatusPendingInstall
		if err := m.store.Update(rel); err != nil {
			m.t.Fatal(err)
		}
	}
	runActionCases(t, []actionCase{
		{name: "marks an interrupted revision failed", setup: interrupted, want: "Locked/Unlock",
			events: []string{"Warning Unlocked"}, conds: map[string]string{"Released": "False Pending", "Ready": "False Progressing"},
			lastAction: "Unlock"},
		{name: "a failed unlock is not counted", setup: interrupted,
			fail: map[string]error{"Unlock": errors.New("secrets is forbidden")}, want: "Locked/Unlock!",
			events: []string{"Warning UnlockFailed"}, conds: map[string]string{"Released": "False UnlockFailed"}, lastAction: "Install"},
	})
}
