package watches

import (
	"testing"
)

func TestLookupLoads(t *testing.T) {
	tests := []struct {
		name, field string
		want        Lookup
		wantErr     string
	}{
		{name: "unset: the release namespace", want: LookupReleaseNamespace},
		{name: "ReleaseNamespace", field: "  lookup: ReleaseNamespace\n", want: LookupReleaseNamespace},
		{name: "Cluster", field: "  lookup: Cluster\n", want: LookupCluster},
		{name: "lower case", field: "  lookup: cluster\n",
			wantErr: `entry 0 (kind "Foo"): field "lookup": "cluster" is not a lookup scope: use "ReleaseNamespace" (default`},
		{name: "a boolean", field: "  lookup: true\n", wantErr: `"lookup"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, ok := parseOneField(t, tt.field, nonEmpty(tt.wantErr)...)
			if !ok {
				return
			}
			if got := w.LookupScope(); got != tt.want {
				t.Errorf("LookupScope() = %q, want %q", got, tt.want)
			}
		})
	}
}
