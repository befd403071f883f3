package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// SampleFile names the sample of a watched kind the kubebuilder way:
// <first label of the group>_<version>_<kind>.yaml.
func SampleFile(w watches.Watch) string {
	group, _, _ := strings.Cut(w.Group, ".")
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("%s_%s_%s.yaml", group, w.Version, lower(w.Kind))
}

// Sample returns a custom resource of w's kind whose spec is the chart's
// values.yaml, comments and all, plus a placeholder for each key spec (the
// CRD's spec schema) requires that the chart has no default for, marked
// for the user to set.
func Sample(w watches.Watch, spec apiextv1.JSONSchemaProps) ([]byte, error) {
	var values []byte
	for _, f := range w.Chart.Raw {
		if f.Name == chartutil.ValuesfileName {
			values = f.Data
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# A %s with the defaults of the chart %s. Written once by `chartkeeper manifests`: edit freely.\n", w.Kind, w.Chart.Name())
	fmt.Fprintf(&b, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s-sample\n", w.GroupVersionKind().GroupVersion(), w.Kind, lower(w.Kind))
	var parsed map[string]any
	if err := yaml.Unmarshal(values, &parsed); err != nil {
		return nil, fmt.Errorf("%s: chart %s: values.yaml: %w", w, w.Chart.Name(), err)
	}
	required := placeholders(spec)
	if len(parsed) == 0 && len(required) == 0 {
		b.WriteString("spec: {}\n")
		return b.Bytes(), nil
	}
	b.WriteString("spec:\n")
	if len(required) > 0 {
		req, err := yaml.Marshal(required)
		if err != nil {
			return nil, err
		}
		b.WriteString("  # Required by the chart, without a default: set these.\n")
		for _, line := range strings.Split(strings.TrimRight(string(req), "\n"), "\n") {
			b.WriteString("  " + line + "\n")
		}
		if len(parsed) > 0 {
			b.WriteString("\n")
		}
		if parsed == nil {
			parsed = map[string]any{}
		}
		for k, v := range required {
			if _, dup := parsed[k]; !dup {
				parsed[k] = v
			}
		}
	}
	for _, line := range strings.Split(strings.TrimRight(string(values), "\n"), "\n") {
		if strings.TrimSpace(line) == "---" {
			continue
		}
		if line == "" {
			b.WriteString("\n")
		} else {
			b.WriteString("  " + line + "\n")
		}
	}
	// Indenting keeps the comments; if it changed the meaning (tabs, an
	// odd block scalar), write the parsed values instead.
	var check struct{ Spec map[string]any }
	if err := yaml.Unmarshal(b.Bytes(), &check); err != nil || !equalJSON(check.Spec, parsed) {
		spec, err := yaml.Marshal(map[string]any{"spec": parsed})
		if err != nil {
			return nil, err
		}
		head, _, _ := strings.Cut(b.String(), "spec:\n")
		return append([]byte(head), spec...), nil
	}
	return b.Bytes(), nil
}

// placeholders returns a value for each key a schema requires (and,
// within those, each key they require): its default, first enum value,
// minimum, or its type's zero value.
func placeholders(s apiextv1.JSONSchemaProps) map[string]any {
	if len(s.Required) == 0 {
		return nil
	}
	out := map[string]any{}
	for _, k := range s.Required {
		p := s.Properties[k]
		var v any
		switch {
		case p.Default != nil:
			_ = json.Unmarshal(p.Default.Raw, &v)
		case len(p.Enum) > 0:
			_ = json.Unmarshal(p.Enum[0].Raw, &v)
		case p.Type == "object":
			m := placeholders(p)
			if m == nil {
				m = map[string]any{}
			}
			v = m
		case p.Type == "array":
			v = []any{}
		case p.Type == "integer" || p.Type == "number":
			v = 0
			if p.Minimum != nil {
				v = *p.Minimum
				if p.Type == "integer" {
					v = int64(*p.Minimum)
				}
			}
		case p.Type == "boolean":
			v = false
		default:
			v = ""
		}
		out[k] = v
	}
	return out
}

// missingSamples returns a sample for each watched kind without one in
// dir, and dir's kustomization.yaml listing them. specs are the kinds'
// spec schemas.
func missingSamples(dir string, ws []watches.Watch, specs map[schema.GroupKind]apiextv1.JSONSchemaProps, have Samples) (map[string][]byte, error) {
	out := map[string][]byte{}
	var added []string
	for _, w := range ws {
		if len(have[w.GroupVersionKind()]) > 0 {
			continue
		}
		b, err := Sample(w, specs[w.GroupVersionKind().GroupKind()])
		if err != nil {
			return nil, err
		}
		name := SampleFile(w)
		out[name] = b
		added = append(added, name)
	}
	if len(added) == 0 {
		return out, nil
	}
	k, err := addResources(filepath.Join(dir, "kustomization.yaml"), added)
	if err != nil {
		return nil, err
	}
	out["kustomization.yaml"] = k
	return out, nil
}

// addResources returns a kustomization file with names in its resources,
// appended as text when resources is its last key (comments kept).
func addResources(path string, names []string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		b, err = []byte("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n"), nil
	}
	if err != nil {
		return nil, err
	}
	var k struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var todo []string
	for _, n := range names {
		if !slices.Contains(k.Resources, n) {
			todo = append(todo, n)
		}
	}
	if len(todo) == 0 {
		return b, nil
	}
	text := strings.TrimRight(string(b), "\n") + "\n"
	if resourcesLast(text) {
		indent := "  "
		if strings.Contains(text, "\n- ") {
			indent = "" // the list is not indented
		}
		for _, n := range todo {
			text += indent + "- " + n + "\n"
		}
		return []byte(text), nil
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	res, _ := m["resources"].([]any)
	for _, n := range todo {
		res = append(res, n)
	}
	m["resources"] = res
	return yaml.Marshal(m)
}

// resourcesLast reports whether "resources:" is the last top-level key.
func resourcesLast(text string) bool {
	last := ""
	for _, l := range strings.Split(text, "\n") {
		if l != "" && l[0] != ' ' && l[0] != '-' && l[0] != '#' {
			last = l
		}
	}
	return strings.HasPrefix(last, "resources:")
}

func equalJSON(a, b any) bool {
	x, err1 := yaml.Marshal(a)
	y, err2 := yaml.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
