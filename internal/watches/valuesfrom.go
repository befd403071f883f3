package watches

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"text/template"

	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/util/validation"
)

// SourceKind is the kind of object a valuesFrom entry reads.
type SourceKind string

// The kinds valuesFrom reads.
const (
	SourceConfigMap SourceKind = "ConfigMap"
	SourceSecret    SourceKind = "Secret"
)

// DefaultValuesKey is the key valuesFrom reads when valuesKey is unset.
const DefaultValuesKey = "values.yaml"

// ValuesReference is one entry of a watch's valuesFrom, as Flux
// helm-controller's: a ConfigMap or Secret in the custom resource's
// namespace whose data is merged into the resource's values, under its
// spec (docs/values-from.md).
type ValuesReference struct {
	// Kind is ConfigMap or Secret.
	Kind SourceKind `json:"kind"`
	// Name is a Go template over NameData ("{{ .Name }}-values"), like
	// releaseName.
	Name string `json:"name"`
	// ValuesKey is the key of the object's data to read. Default
	// values.yaml.
	ValuesKey string `json:"valuesKey,omitempty"`
	// TargetPath, when set, is where the key's content goes, as a string
	// (Helm --set-string path syntax: "auth.password", "hosts[0]");
	// unset, the content is a YAML document of values merged at the root.
	TargetPath string `json:"targetPath,omitempty"`
	// Optional: a missing object or key is skipped. Default false: it
	// holds the release back (reason ValuesSourceMissing).
	Optional bool `json:"optional,omitempty"`

	name *template.Template
}

// UnmarshalJSON decodes an entry strictly (no unknown fields), saying
// what Flux calls the key when an entry names it "key".
func (r *ValuesReference) UnmarshalJSON(b []byte) error {
	type plain ValuesReference
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		var te *json.UnmarshalTypeError
		switch {
		case strings.Contains(err.Error(), `unknown field "key"`):
			return errors.New(`valuesFrom: unknown field "key": the key to read is named valuesKey (as in Flux's valuesFrom)`)
		case errors.As(err, &te) && te.Field != "":
			return fmt.Errorf("valuesFrom: field %q: expected %s, got a %s", te.Field, jsonTypeName(te.Type.Kind().String()), te.Value)
		case errors.As(err, &te):
			return errors.New("valuesFrom: each entry must be a mapping of kind, name, valuesKey, targetPath and optional")
		}
		return errors.New("valuesFrom: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	*r = ValuesReference(p)
	return nil
}

// SourceObject is a ConfigMap or Secret a custom resource takes values from.
type SourceObject struct {
	Kind      SourceKind
	Namespace string
	Name      string
}

func (o SourceObject) String() string { return fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name) }

// ValuesSource is a valuesFrom entry resolved for one custom resource: the
// object named, the key (defaulted), where it goes and whether it may be
// missing.
type ValuesSource struct {
	Object     SourceObject
	ValuesKey  string
	TargetPath string
	Optional   bool
}

// ValuesSources returns the watch's valuesFrom for one custom resource, in
// order: each name rendered over the resource's name, namespace and kind
// (as releaseName is), in the resource's namespace (the release namespace
// for a cluster-scoped kind, which has none). An error means a name
// template gives no valid object name for this resource.
func (w Watch) ValuesSources(name, namespace, releaseNamespace string) ([]ValuesSource, error) {
	if len(w.ValuesFrom) == 0 {
		return nil, nil
	}
	d := NameData{Name: name, Namespace: namespace, Kind: w.Kind}
	if namespace == "" {
		namespace = releaseNamespace
	}
	out := make([]ValuesSource, 0, len(w.ValuesFrom))
	for i, r := range w.ValuesFrom {
		n, err := r.render(d)
		if err != nil {
			return nil, fmt.Errorf("valuesFrom[%d]: %w", i, err)
		}
		key := r.ValuesKey
		if key == "" {
			key = DefaultValuesKey
		}
		out = append(out, ValuesSource{Object: SourceObject{Kind: r.Kind, Namespace: namespace, Name: n},
			ValuesKey: key, TargetPath: r.TargetPath, Optional: r.Optional})
	}
	return out, nil
}

// render gives the object's name for one resource.
func (r ValuesReference) render(d NameData) (string, error) {
	t := r.name
	if t == nil { // a reference not made by Load
		var err error
		if t, err = parseNameTemplate("name", r.Name, ""); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	if err := t.Execute(&b, d); err != nil {
		return "", fmt.Errorf("name template: %w", err)
	}
	n := b.String()
	if msgs := validation.IsDNS1123Subdomain(n); len(msgs) > 0 {
		return "", fmt.Errorf("name %q (from %q) is not a valid %s name: %s", n, r.Name, r.Kind, strings.Join(msgs, "; "))
	}
	return n, nil
}

// targetPathPattern is what a targetPath may hold, as Flux checks it:
// key characters, dots, escapes and list indices.
var targetPathPattern = regexp.MustCompile(`^([a-zA-Z0-9_\-.\\/]|\[[0-9]{1,5}\])+$`)

// maxTargetPath bounds a targetPath's length (Flux's bound).
const maxTargetPath = 250

// validateValuesFrom checks each entry and parses its name template.
func (w *Watch) validateValuesFrom(add func(field, format string, args ...any)) {
	for i := range w.ValuesFrom {
		r := &w.ValuesFrom[i]
		field := func(f string) string { return fmt.Sprintf("valuesFrom[%d].%s", i, f) }
		switch r.Kind {
		case SourceConfigMap, SourceSecret:
		case "":
			add(field("kind"), "must be set: %q or %q", SourceConfigMap, SourceSecret)
		default:
			add(field("kind"), "%q is not a kind valuesFrom reads: use %q or %q", r.Kind, SourceConfigMap, SourceSecret)
		}
		if r.Name == "" {
			add(field("name"), `must be set: the object's name, or a template such as "{{ .Name }}-values"`)
		} else if t, err := parseNameTemplate("name", r.Name, ""); err != nil {
			add(field("name"), "%v", err)
		} else {
			r.name = t
			// A sample resource shows a template that names a field
			// NameData lacks, or gives no valid object name.
			if _, err := r.render(NameData{Name: "example", Namespace: "default", Kind: w.Kind}); err != nil {
				add(field("name"), "%v", err)
			}
		}
		if r.ValuesKey != "" {
			for _, msg := range validation.IsConfigMapKey(r.ValuesKey) {
				add(field("valuesKey"), "%q is not a key of a %s's data: %s", r.ValuesKey, r.Kind, msg)
			}
		}
		if p := r.TargetPath; p != "" {
			if len(p) > maxTargetPath || !targetPathPattern.MatchString(p) {
				add(field("targetPath"), "%q is not a values path: keys joined by dots, with list indices ([0]), at most %d characters (Helm --set syntax)", p, maxTargetPath)
			} else if _, err := strvals.ParseString(p + "=x"); err != nil {
				add(field("targetPath"), "%q is not a values path: %v", p, err)
			}
		}
	}
}
