package values

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
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
	return ComputeAs(spec, overrides, false)
}

// ComputeAs is Compute with asStrings: the overrides are read as
// operator-sdk's Helm operator reads its overrideValues: each value a
// string (Helm's --set-string: "2" stays "2", not 2), parsed on their own
// and merged over the spec (maps merged key by key, anything else
// replaced: "list[0]" replaces the spec's list). Otherwise they are set
// into the spec with --set, typed, as helm-operator-plugins sets them.
func ComputeAs(spec chartutil.Values, overrides map[string]string, asStrings bool) (chartutil.Values, error) {
	out := runtimeDeepCopy(spec)
	into, parse := out, strvals.ParseInto
	if asStrings {
		into, parse = map[string]any{}, strvals.ParseIntoString
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := parse(fmt.Sprintf("%s=%s", k, overrides[k]), into); err != nil {
			return nil, fmt.Errorf("overrideValues %q: %w", k, err)
		}
	}
	if asStrings {
		return Merge(out, into), nil
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

// runtimeDeepCopy copies JSON-like values. Values a Go hook computed may
// hold Go types JSON decoding never makes (int, []string, ...): they are
// normalised to their JSON forms (int64, float64, []any, map[string]any).
func runtimeDeepCopy(in map[string]any) map[string]any {
	if in == nil {
		return map[string]any{}
	}
	return runtime.DeepCopyJSON(normalize(in).(map[string]any))
}

func normalize(v any) any {
	switch t := v.(type) {
	case nil, string, bool, int64, float64, json.Number:
		return v
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = normalize(e)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(rv.Uint())
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normalize(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() == reflect.String {
			out := make(map[string]any, rv.Len())
			for _, k := range rv.MapKeys() {
				out[k.String()] = normalize(rv.MapIndex(k).Interface())
			}
			return out
		}
	}
	// Anything else (structs, pointers): through JSON.
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprint(v)
	}
	return normalize(out)
}
