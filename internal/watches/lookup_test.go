package watches

import (
	"strings"
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
			ws, err := Parse([]byte("- version: v1\n  kind: Foo\n  chart: chart\n"+tt.field), "testdata")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := ws[0].LookupScope(); got != tt.want {
				t.Errorf("LookupScope() = %q, want %q", got, tt.want)
			}
		})
	}
}
