package values

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// FromSpec returns a deep copy of the resource's .spec (empty if unset). A
// .spec that is not an object is an error.
func FromSpec(obj *unstructured.Unstructured) (chartutil.Values, error) {
	raw, ok := obj.Object["spec"]
	if !ok || raw == nil {
		return chartutil.Values{}, nil
	}
	spec, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf(".spec must be an object, got %T", raw)
	}
	return runtimeDeepCopy(spec), nil
}

// Compute returns the values for a release: spec with overrides set on top.
// Overrides use Helm's --set syntax ("image.tag"); their keys are applied in
// sorted order so the result never depends on map iteration.
func Compute(spec chartutil.Values, overrides map[string]string) (chartutil.Values, error) {
	out := runtimeDeepCopy(spec)
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := strvals.ParseInto(fmt.Sprintf("%s=%s", k, overrides[k]), out); err != nil {
			return nil, fmt.Errorf("overrideValues %q: %w", k, err)
		}
	}
	return out, nil
}

// Validate checks values against the chart's values.schema.json (and its
// subcharts'), after coalescing them with the chart's defaults, exactly as
// Helm does before it renders. The error is the chart's own message.
func Validate(ch *chart.Chart, vals chartutil.Values) error {
	coalesced, err := chartutil.CoalesceValues(ch, vals)
	if err != nil {
		return err
	}
	return chartutil.ValidateAgainstSchema(ch, coalesced)
}

// ChartDigest fingerprints everything in a chart that affects what it
// renders: metadata, templates, values, schema, files and dependencies.
func ChartDigest(ch *chart.Chart) string {
	h := sha256.New()
	var walk func(c *chart.Chart)
	walk = func(c *chart.Chart) {
		meta, _ := json.Marshal(c.Metadata)
		fmt.Fprintf(h, "chart %d\n%s\n", len(meta), meta)
		for _, group := range [][]*chart.File{c.Templates, c.Files} {
			files := append([]*chart.File(nil), group...)
			sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
			for _, f := range files {
				fmt.Fprintf(h, "file %s %d\n", f.Name, len(f.Data))
				h.Write(f.Data)
			}
		}
		vals, _ := json.Marshal(c.Values)
		fmt.Fprintf(h, "values %d\n%s\nschema %d\n", len(vals), vals, len(c.Schema))
		h.Write(c.Schema)
		deps := append([]*chart.Chart(nil), c.Dependencies()...)
		sort.Slice(deps, func(i, j int) bool { return deps[i].Name() < deps[j].Name() })
		for _, d := range deps {
			walk(d)
		}
	}
	walk(ch)
	return hex.EncodeToString(h.Sum(nil))
}

// DigestLength is the length of a Digest: 40 hex characters (160 bits),
// short enough for a label value.
const DigestLength = 40

// Digest fingerprints a chart (by ChartDigest) and values. Equal inputs give
// equal digests; JSON encoding sorts map keys, so the digest does not depend
// on map order.
func Digest(chartDigest string, vals chartutil.Values) (string, error) {
	b, err := json.Marshal(vals)
	if err != nil {
		return "", fmt.Errorf("values cannot be encoded: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", chartDigest)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))[:DigestLength], nil
}

func runtimeDeepCopy(in map[string]any) map[string]any {
	if in == nil {
		return map[string]any{}
	}
	return runtime.DeepCopyJSON(in)
}
