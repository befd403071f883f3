package watches

import (
	"strings"
	"testing"
)

func TestStatusCompatLoads(t *testing.T) {
	tests := []struct {
		name, field string
		want        bool
		wantErr     string
	}{
		{name: "unset: chartkeeper's status only"},
		{name: "None", field: "  statusCompat: None\n"},
		{name: "HelmOperator", field: "  statusCompat: HelmOperator\n", want: true},
		{name: "lower case", field: "  statusCompat: helmoperator\n",
			wantErr: `entry 0 (kind "Foo"): field "statusCompat": "helmoperator" is not a status shape: use "HelmOperator"`},
		{name: "a boolean", field: "  statusCompat: true\n", wantErr: `"statusCompat"`},
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
			if got := ws[0].HelmOperatorStatus(); got != tt.want {
				t.Errorf("HelmOperatorStatus() = %v, want %v", got, tt.want)
			}
		})
	}
}
