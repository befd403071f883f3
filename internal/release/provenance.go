package release

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
)

// The digest label alone proves nothing: Helm copies the last revision's
// labels on every upgrade, so a person's `helm upgrade --set x=y` carries
// chartkeeper's digest while other values run. A deployed revision whose
// label names the desired digest is trusted only once its stored content
// is checked: the values Helm stored (rel.Config) are the desired values,
// and the chart it was made from has the desired chart's name, version and
// templates. The check decodes the revision once per revision per process
// (the decode the released objects need anyway: the manifest is parsed
// and cached at the same time); revisions this process made are checked
// from the release Helm returned, with no decode at all.

// provenance is the verdict on one stored revision.
type provenance struct {
	// verified: made from the values and chart its digest label names.
	verified bool
	// differs says what does not match ("values", "chart app-1.0.1", ...).
	differs string
	// who describes the revision as Helm recorded it: its description,
	// when it was deployed, and any labels not chartkeeper's.
	who string
}

// prove checks a stored revision against the desired chart and values.
func prove(rel *helmrelease.Release, ch *chart.Chart, vals chartutil.Values) provenance {
	var differs []string
	switch {
	case rel.Chart == nil || rel.Chart.Metadata == nil:
		differs = append(differs, "no chart stored")
	case rel.Chart.Metadata.Name != ch.Metadata.Name || rel.Chart.Metadata.Version != ch.Metadata.Version:
		differs = append(differs, fmt.Sprintf("chart %s-%s", rel.Chart.Metadata.Name, rel.Chart.Metadata.Version))
	case !sameTemplates(rel.Chart.Templates, ch.Templates):
		differs = append(differs, "chart templates")
	}
	if !sameValues(rel.Config, vals) && !sameCoalesced(rel.Config, ch, vals) {
		differs = append(differs, "values")
	}
	if len(differs) == 0 {
		return provenance{verified: true}
	}
	return provenance{differs: strings.Join(differs, ", "), who: describe(rel)}
}

// sameValues compares values as Helm stores them: JSON, decoded into
// generic maps (numbers become float64; an empty map is not stored).
func sameValues(stored, desired map[string]any) bool {
	a, errA := helm.CanonicalValues(stored)
	b, errB := helm.CanonicalValues(desired)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// sameCoalesced reports whether stored are vals merged over the chart's
// defaults, as Helm merges them before it renders. helm-operator-plugins
// stores these as a revision's values (its getValues coalesces the spec
// with the chart's defaults): they render exactly what vals render, so a
// revision storing them was made from vals (a predecessor's release taken
// over, takeover.go, is in sync without an upgrade).
func sameCoalesced(stored map[string]any, ch *chart.Chart, vals map[string]any) bool {
	if len(stored) == 0 {
		return false
	}
	c, err := chartutil.CoalesceValues(ch, vals)
	return err == nil && sameValues(stored, c)
}

// sameTemplates compares the chart's own templates (Helm does not store
// subcharts with a revision).
func sameTemplates(stored, desired []*chart.File) bool {
	if len(stored) != len(desired) {
		return false
	}
	m := make(map[string][]byte, len(desired))
	for _, f := range desired {
		m[f.Name] = f.Data
	}
	for _, f := range stored {
		d, ok := m[f.Name]
		if !ok || !bytes.Equal(d, f.Data) {
			return false
		}
	}
	return true
}

// describe names a revision as Helm recorded it: "\"Upgrade complete\",
// deployed 2026-11-23T14:16:30Z, labels team=ops".
func describe(rel *helmrelease.Release) string {
	var parts []string
	if rel.Info != nil {
		parts = append(parts, fmt.Sprintf("%q", rel.Info.Description))
		if !rel.Info.LastDeployed.IsZero() {
			parts = append(parts, "deployed "+rel.Info.LastDeployed.UTC().Format(time.RFC3339))
		}
	}
	var labels []string
	for k, v := range rel.Labels {
		if !strings.HasPrefix(k, labelDomain) {
			labels = append(labels, k+"="+v)
		}
	}
	if len(labels) > 0 {
		sort.Strings(labels)
		parts = append(parts, "labels "+strings.Join(labels, ","))
	}
	return strings.Join(parts, ", ")
}

// outOfBandMessage is the message of a revision that fails the proof.
func outOfBandMessage(version int, p provenance) string {
	return fmt.Sprintf("revision %d was made outside chartkeeper (%s; differs: %s): upgrading back to the desired chart and values",
		version, p.who, p.differs)
}

// provenanceOf returns the verdict on a revision whose digest label is the
// desired digest, from memory or by decoding it once (its manifest parsed
// and cached on the way, for objects).
func (e *Engine) provenanceOf(ctx context.Context, t Target, d desired, version int) (provenance, error) {
	key := releaseKey(d.ref)
	if p, ok := e.proofs.get(key, version); ok {
		return p, nil
	}
	rel, err := e.helm.Get(ctx, d.ref.Name, d.ref.Namespace, version)
	if err != nil {
		return provenance{}, fmt.Errorf("reading revision %d: %w", version, err)
	}
	if _, ok := e.manifests.get(key, version); !ok {
		if objs, err := parseManifest(rel.Manifest, d.ref.Namespace, e.helm.Mapper()); err == nil {
			e.manifests.setOnly(key, version, remembered(objs, d.ref, version))
		}
	}
	p := prove(rel, t.Watch.Chart, d.values)
	e.proofs.setOnly(key, version, p)
	return p, nil
}

// labelDomain prefixes chartkeeper's own labels (api.LabelDigest, ...).
var labelDomain = api.LabelManaged[:strings.Index(api.LabelManaged, "/")+1]
