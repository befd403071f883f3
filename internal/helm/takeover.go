package helm

import (
	"context"
	"maps"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
)

// TakeOver rewrites rel, a stored revision (the latest, as Get returned
// it), in place through the release storage with labels added: the
// takeover of a release a predecessor operator made (the release engine's
// takeover.go). Nothing else changes: its version, status, chart, values,
// manifest and hooks are as stored, nothing is applied and no revision is
// made. Its other labels are kept (Helm's driver returns them with the
// revision). The storage stamps nothing new on it (it makes no revision)
// and, with a key (SignWith), signs it as a revision the operator wrote:
// the engine calls it only after it checked what the revision names.
//
// Helm's Secret driver replaces the Secret whole, so the ownerReferences
// the predecessor put on the latest revision's Secret are not kept (the
// older revisions' Secrets keep theirs); the chunked driver updates its
// index Secret the same way.
func (c *Client) TakeOver(ctx context.Context, rel *release.Release, labels map[string]string) error {
	l := maps.Clone(rel.Labels)
	if l == nil {
		l = map[string]string{}
	}
	delete(l, LabelUnsigned) // read unsigned; rewritten as the operator's own
	maps.Copy(l, labels)
	rel.Labels = l
	cfg := &action.Configuration{Releases: c.releases(ctx, rel.Namespace)}
	return joinFlush(cfg, cfg.Releases.Update(rel))
}
