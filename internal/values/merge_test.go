package values

import (
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
)

func TestMerge(t *testing.T) {
	tests := []struct {
		name             string
		base, over, want map[string]any
	}{
		{"disjoint keys", map[string]any{"a": "1"}, map[string]any{"b": "2"}, map[string]any{"a": "1", "b": "2"}},
		{"the later scalar wins", map[string]any{"a": "1"}, map[string]any{"a": "2"}, map[string]any{"a": "2"}},
		{"maps merge key by key",
			map[string]any{"db": map[string]any{"host": "h", "port": int64(1)}},
			map[string]any{"db": map[string]any{"port": int64(2)}},
			map[string]any{"db": map[string]any{"host": "h", "port": int64(2)}}},
		{"lists are replaced whole", map[string]any{"l": []any{"a", "b"}}, map[string]any{"l": []any{"c"}}, map[string]any{"l": []any{"c"}}},
		{"a map replaces a scalar", map[string]any{"a": "x"}, map[string]any{"a": map[string]any{"b": "y"}}, map[string]any{"a": map[string]any{"b": "y"}}},
		{"a scalar replaces a map", map[string]any{"a": map[string]any{"b": "y"}}, map[string]any{"a": "x"}, map[string]any{"a": "x"}},
		{"null is kept (the chart's defaults drop the key)", map[string]any{"a": "x"}, map[string]any{"a": nil}, map[string]any{"a": nil}},
		{"nothing under", nil, map[string]any{"a": "x"}, map[string]any{"a": "x"}},
		{"nothing over", map[string]any{"a": "x"}, nil, map[string]any{"a": "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := runtimeDeepCopy(tt.base)
			if got := Merge(tt.base, tt.over); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Merge = %v, want %v", got, tt.want)
			}
			if tt.base != nil && !reflect.DeepEqual(before, runtimeDeepCopy(tt.base)) {
				t.Errorf("Merge changed its base: %v", tt.base)
			}
		})
	}
}

func TestParseDocument(t *testing.T) {
	tests := []struct {
		name, doc string
		want      chartutil.Values
		err       string
	}{
		{"values", "config:\n  host: db\nreplicas: 3\n", chartutil.Values{"config": map[string]any{"host": "db"}, "replicas": float64(3)}, ""},
		{"empty is no values", "", chartutil.Values{}, ""},
		{"comments only are no values", "# nothing\n", chartutil.Values{}, ""},
		{"not a mapping", "- a\n- b\n", nil, "cannot unmarshal"},
		{"not YAML", "a: [\n", nil, "line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDocument([]byte(tt.doc))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSetString(t *testing.T) {
	tests := []struct {
		name, path, value string
		base, want        chartutil.Values
	}{
		{"a new path", "auth.password", "s3cret", chartutil.Values{},
			chartutil.Values{"auth": map[string]any{"password": "s3cret"}}},
		{"beside what is there", "auth.password", "s3cret", chartutil.Values{"auth": map[string]any{"user": "u"}},
			chartutil.Values{"auth": map[string]any{"user": "u", "password": "s3cret"}}},
		{"a number stays a string", "port", "5432", chartutil.Values{}, chartutil.Values{"port": "5432"}},
		{"true stays a string", "flag", "true", chartutil.Values{}, chartutil.Values{"flag": "true"}},
		{"commas, braces, equals and backslashes are the value's", "pw", `a,b={c}\d.e[0]`, chartutil.Values{},
			chartutil.Values{"pw": `a,b={c}\d.e[0]`}},
		{"a multi-line value", "ca", "-----BEGIN-----\nabc\n-----END-----\n", chartutil.Values{},
			chartutil.Values{"ca": "-----BEGIN-----\nabc\n-----END-----\n"}},
		{"unicode", "greeting", "héllo, wörld", chartutil.Values{}, chartutil.Values{"greeting": "héllo, wörld"}},
		{"empty", "pw", "", chartutil.Values{}, chartutil.Values{"pw": ""}},
		{"a list index", "hosts[1]", "b", chartutil.Values{"hosts": []any{"a"}}, chartutil.Values{"hosts": []any{"a", "b"}}},
		{"an escaped dot in a key", `annotations.example\.com/key`, "v", chartutil.Values{},
			chartutil.Values{"annotations": map[string]any{"example.com/key": "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := SetString(tt.base, tt.path, tt.value); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tt.base, tt.want) {
				t.Errorf("got %#v, want %#v", tt.base, tt.want)
			}
		})
	}
	// A path through a value that is not a map is an error, not a panic.
	if err := SetString(chartutil.Values{"auth": "x"}, "auth.password", "s3cret"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("setting under a string: %v (an error that does not quote the value)", err)
	}
}

func TestLeaves(t *testing.T) {
	got := Leaves(map[string]any{"a": "short", "b": []any{"abc", "longer-one", int64(123456)}, "c": map[string]any{"d": true, "e": "short"}})
	want := []string{"longer-one", "123456", "short"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Leaves = %q, want %q", got, want)
	}
	if got := Leaves("a-secret"); !reflect.DeepEqual(got, []string{"a-secret"}) {
		t.Errorf("Leaves of a string = %q", got)
	}
}
