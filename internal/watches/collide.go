package watches

import (
	"fmt"
	"strings"
)

// collisionProbes are resources (name, namespace) whose releases are
// compared across watches: two watches that give every probe the same
// release would give a resource of each kind, of one name in one
// namespace, the same release.
var collisionProbes = [][2]string{{"db", "team-a"}, {"web-1", "b"}}

// Collisions warns, one message per pair of watches, when two kinds' release
// name and namespace templates cannot keep their releases apart: both
// default ("{{ .Name }}" in "{{ .Namespace }}"), say. It is a warning, not
// an error: such resources only clash when they share a name, and the
// second one is then refused (ReleaseOwnedByAnother), never merged.
func Collisions(ws []Watch) []string {
	var out []string
	for i := range ws {
		for j := i + 1; j < len(ws); j++ {
			if !sameReleases(ws[i], ws[j]) {
				continue
			}
			out = append(out, fmt.Sprintf("watches %s (entry %d) and %s (entry %d) give resources of the same name and namespace the same release: "+
				"the second to ask for it is refused (ReleaseOwnedByAnother). Set releaseName on one of them (e.g. \"{{ .Name }}-%s\") to keep them apart; "+
				"changing it for a kind with existing resources installs their releases anew under the new name",
				ws[i].Kind, i, ws[j].Kind, j, strings.ToLower(ws[j].Kind)))
		}
	}
	return out
}

func sameReleases(a, b Watch) bool {
	for _, p := range collisionProbes {
		ra, errA := a.Release(p[0], p[1])
		rb, errB := b.Release(p[0], p[1])
		if errA != nil || errB != nil || ra != rb {
			return false
		}
	}
	return true
}
