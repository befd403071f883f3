package watches

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Load reads and validates the watches file at path. Relative chart paths
// are resolved against the file's directory, else the working directory
// (resolveChartPath). The error, if any, joins one
// *FieldError per problem (use errors.As to inspect them), one per line, or
// says why the file could not be read or parsed at all. It does not repeat
// the path: callers name the file.
func Load(path string) ([]Watch, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading watches file: %w", err)
	}
	return Parse(data, filepath.Dir(path))
}

// Parse validates watches.yaml content; baseDir resolves relative chart paths.
func Parse(data []byte, baseDir string) ([]Watch, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(js, &raw); err != nil {
		return nil, errors.New("the top level must be a list of watch entries")
	}
	if len(raw) == 0 {
		return nil, errors.New("no watch entries: add at least one group/version/kind with its chart")
	}

	var errs []error
	seen := map[string]int{}
	out := make([]Watch, 0, len(raw))
	for i, r := range raw {
		w, entryErrs := parseEntry(i, r, baseDir)
		errs = append(errs, entryErrs...)
		if w == nil {
			continue
		}
		key := w.GroupVersionKind().String()
		if first, dup := seen[key]; dup {
			errs = append(errs, &FieldError{Index: i, Kind: w.Kind, Field: "kind",
				Detail: fmt.Sprintf("%s is already watched by entry %d", key, first)})
		}
		seen[key] = i
		out = append(out, *w)
	}
	errs = append(errs, resolveShortNames(out)...)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

func parseEntry(i int, r json.RawMessage, baseDir string) (*Watch, []error) {
	var w Watch
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, []error{&FieldError{Index: i, Kind: peekKind(r), Detail: decodeDetail(err)}}
	}
	var errs []error
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Index: i, Kind: w.Kind, Field: field, Detail: fmt.Sprintf(format, args...)})
	}

	if w.Group != "" {
		for _, msg := range validation.IsDNS1123Subdomain(w.Group) {
			add("group", "%q is not a valid API group: %s", w.Group, msg)
		}
	}
	if w.Version == "" {
		add("version", "must be set (e.g. v1alpha1)")
	} else {
		for _, msg := range validation.IsDNS1035Label(w.Version) {
			add("version", "%q is not a valid API version: %s", w.Version, msg)
		}
	}
	switch {
	case w.Kind == "":
		add("kind", "must be set (e.g. WebApp)")
	case !IsKindName(w.Kind):
		add("kind", "%q must start with an upper-case letter and hold only letters and digits", w.Kind)
	}
	if w.ChartPath == "" {
		add("chart", "must be set to a chart directory or archive")
	} else {
		p, err := resolveChartPath(baseDir, w.ChartPath)
		if err != nil {
			add("chart", "%v", err)
		} else if ch, err := loader.Load(p); err != nil {
			add("chart", "cannot load chart %q: %v%s", w.ChartPath, err, notFoundHint(w.ChartPath, err))
		} else {
			w.Chart, w.ResolvedChartPath = ch, p
		}
	}
	if w.ReconcilePeriod != nil && w.ReconcilePeriod.Duration < 0 {
		add("reconcilePeriod", "must not be negative, got %s", w.ReconcilePeriod.Duration)
	}
	if w.MaxConcurrentReconciles != nil && *w.MaxConcurrentReconciles < 1 {
		add("maxConcurrentReconciles", "must be at least 1, got %d", *w.MaxConcurrentReconciles)
	}
	w.LabelSelector = labels.Everything() // an unset selector selects every resource
	if w.Selector != nil {
		sel, err := metav1.LabelSelectorAsSelector(w.Selector)
		if err != nil {
			add("selector", "%v", err)
		} else {
			w.LabelSelector = sel
		}
	}
	if w.WatchDependentResources == nil {
		t := true
		w.WatchDependentResources = &t
	}
	validateDryRunOption(w.DryRunOption, add)
	w.resolvePolicy(add)
	w.validateNamespaceFromName(add)
	w.Hooks.validate(add)
	ValidateImages(w.Images, add)
	w.Scope.validate(add)
	validateStorage(w.Storage, add)
	validateLookup(w.Lookup, add)
	validateStatusCompat(w.StatusCompat, add)
	validateCRDs(w.CRDs, add)
	validateShortNames(w.ShortNames, add)
	w.validateValuesFrom(add)
	w.Impersonate.validate(add)
	expanded, err := expandOverrideValues(w.OverrideValues)
	if err != nil {
		add("overrideValues", "%v", err)
	}
	w.OverrideValues = expanded
	return &w, errs
}

// expandOverrideValues expands environment variables and then sprig
// templates in each value, as helm-operator-plugins does.
func expandOverrideValues(in map[string]string) (map[string]string, error) {
	if in == nil {
		return nil, nil
	}
	out := make(map[string]string, len(in))
	for k, v := range in {
		env := os.ExpandEnv(v)
		t, err := template.New(k).Funcs(sprig.TxtFuncMap()).Option("missingkey=error").Parse(env)
		if err != nil {
			return nil, fmt.Errorf("key %q: invalid template %q: %v", k, env, err)
		}
		var b strings.Builder
		if err := t.Execute(&b, nil); err != nil {
			return nil, fmt.Errorf("key %q: template %q failed: %v", k, env, err)
		}
		out[k] = b.String()
	}
	return out, nil
}

// IsKindName reports whether s is a valid kind: an upper-case letter,
// then letters and digits.
func IsKindName(s string) bool {
	for i, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
		case i > 0 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9'):
		default:
			return false
		}
	}
	return s != ""
}

// peekKind returns the entry's kind when the entry is an object with a
// string kind, so that decode errors can still name it.
func peekKind(r json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(r, &m) != nil {
		return ""
	}
	k, _ := m["kind"].(string)
	return k
}

// decodeDetail turns encoding/json's messages into ones that name the field.
func decodeDetail(err error) string {
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te):
		return fmt.Sprintf("field %q: expected %s, got a %s", te.Field, jsonTypeName(te.Type.Kind().String()), te.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return fmt.Sprintf("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	case strings.HasPrefix(err.Error(), "json: cannot unmarshal array into Go value of type watches.Watch"),
		strings.HasPrefix(err.Error(), "json: cannot unmarshal"):
		return "each entry must be a mapping of fields (group, version, kind, chart, ...)"
	default:
		return strings.TrimPrefix(err.Error(), "json: ")
	}
}

func jsonTypeName(goKind string) string {
	switch goKind {
	case "int", "int64", "int32":
		return "an integer"
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "map", "struct", "ptr":
		return "a mapping"
	case "slice":
		return "a list"
	}
	return goKind
}
