package manifests

import (
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Rendered is a chart rendered client-side with some values.
type Rendered struct {
	// What names the values: "defaults" or "sample N" (from 1).
	What string
	// Objects are the manifests' objects, in file order, test hooks left
	// out (never released).
	Objects []map[string]any
	// Tests are the objects of the chart's test hooks (helm.sh/hook: test):
	// what running its tests creates.
	Tests []map[string]any
	// record is the release Helm would store for a first install of this
	// render (chart, values, manifest, notes): what RecordSize measures.
	record *release.Release
}

// defaultsRender is the What of the render with the chart's defaults.
const defaultsRender = "defaults"

// Render renders w's chart with its default values and with each sample's
// spec (for optional parts that are off by default), the watch's
// overrideValues applied, as Helm would for an install. The defaults alone
// may fail (a chart may require values it has no default for) when a
// sample renders; a sample that fails is an error.
func Render(w watches.Watch, samples Samples) ([]Rendered, error) {
	var out []Rendered
	var defaultsErr error
	for i, spec := range append([]map[string]any{{}}, samples[w.GroupVersionKind()]...) {
		what := defaultsRender
		if i > 0 {
			what = fmt.Sprintf("sample %d", i)
		}
		r, err := render(w, spec, what)
		if err != nil {
			err = fmt.Errorf("%s: rendering chart %s with %s: %w", w, w.Chart.Metadata.Name, what, err)
			if i == 0 {
				defaultsErr = err
				continue
			}
			return nil, err
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, defaultsErr
	}
	return out, nil
}

// render renders w's chart with spec once: its objects, its test hooks
// apart, and the release record Helm would store.
func render(w watches.Watch, spec map[string]any, what string) (Rendered, error) {
	in, err := values.ComputeAs(spec, w.OverrideValues, w.OverrideValuesAsStrings)
	if err != nil {
		return Rendered{}, err
	}
	vals, err := chartutil.ToRenderValues(w.Chart, in, chartutil.ReleaseOptions{Name: renderRelease, Namespace: renderNamespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return Rendered{}, err
	}
	files, err := engine.Render(w.Chart, vals)
	if err != nil {
		return Rendered{}, err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	r := Rendered{What: what, record: &release.Release{Name: renderRelease, Namespace: renderNamespace, Chart: w.Chart, Config: in, Version: 1,
		Info: &release.Info{Status: release.StatusDeployed, Description: "Install complete"}}}
	var manifest strings.Builder
	for _, name := range names {
		switch {
		case strings.HasSuffix(name, "NOTES.txt"):
			r.record.Info.Notes += files[name]
			continue
		case !isManifest(name) || strings.TrimSpace(files[name]) == "":
			continue
		}
		fmt.Fprintf(&manifest, "---\n# Source: %s\n%s\n", name, files[name])
		for _, doc := range releaseutil.SplitManifests(files[name]) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				return Rendered{}, fmt.Errorf("%s: %w", name, err)
			}
			switch {
			case len(obj) == 0:
			case isTestHook(obj):
				r.Tests = append(r.Tests, obj)
			default:
				r.Objects = append(r.Objects, obj)
			}
		}
	}
	r.record.Manifest = manifest.String()
	return r, nil
}

// renderToggles renders the chart once with each boolean default flipped
// (ingress.enabled, pdb.create, ...), and once with each count of 0 or 1
// raised to 2 (a PodDisruptionBudget rendered only when replicaCount > 1),
// so that the role covers the kinds a user turns on. A render that fails
// (the option needs more values) is skipped.
func renderToggles(w watches.Watch) []Rendered {
	defaults, err := chartutil.CoalesceValues(w.Chart, map[string]any{})
	if err != nil {
		return nil
	}
	var out []Rendered
	var walk func(m map[string]any, path []string)
	walk = func(m map[string]any, path []string) {
		try := func(k string, v any, what string) {
			spec := map[string]any{k: v}
			for i := len(path) - 1; i >= 0; i-- {
				spec = map[string]any{path[i]: spec}
			}
			if r, err := render(w, spec, what+" "+strings.Join(append(path, k), ".")); err == nil {
				out = append(out, r)
			}
		}
		for _, k := range sortedKeys(m) {
			switch v := m[k].(type) {
			case bool:
				try(k, !v, "toggled")
			case int, int64, float64:
				if n := fmt.Sprint(v); n == "0" || n == "1" {
					try(k, 2, "raised")
				}
			case map[string]any:
				if len(path) < 3 {
					walk(v, append(append([]string{}, path...), k))
				}
			}
		}
	}
	walk(defaults, nil)
	return out
}

// isTestHook tells a `helm test` object: never released by chartkeeper.
func isTestHook(obj map[string]any) bool {
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	hook, _ := ann["helm.sh/hook"].(string)
	for _, h := range strings.Split(hook, ",") {
		if strings.TrimSpace(h) == "test" || strings.TrimSpace(h) == "test-success" {
			return true
		}
	}
	return false
}
