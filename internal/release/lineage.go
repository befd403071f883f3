package release

import "github.com/chartkeeper/chartkeeper/internal/helm"

// previousDeployed is the newest revision before the latest that was
// deployed, the one a rollback goes back to; 0 if none. A revision Helm
// marked superseded after it failed (a failed rollback does that to the
// failed upgrade before it) is not one: its stamps say it failed
// (helm.Revision.Deployed). Descriptions are never read: Helm rewrites
// them, and they are written for people.
func previousDeployed(revs []helm.Revision) int {
	for i := len(revs) - 2; i >= 0; i-- {
		if revs[i].Deployed() {
			return revs[i].Version
		}
	}
	return 0
}
