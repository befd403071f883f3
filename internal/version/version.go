// Package version holds chartkeeper's build identity, stamped at link time
// with -ldflags "-X github.com/chartkeeper/chartkeeper/internal/version.Version=...".
package version

import "runtime/debug"

// Version is the release version; "dev" for untagged builds.
var Version = "dev"

// String returns the version with the VCS revision when the build knows it.
func String() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return Version + " (" + s.Value[:12] + ")"
			}
		}
	}
	return Version
}
