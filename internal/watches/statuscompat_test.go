package watches

import (
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
			w, ok := parseOneField(t, tt.field, nonEmpty(tt.wantErr)...)
			if !ok {
				return
			}
			if got := w.HelmOperatorStatus(); got != tt.want {
				t.Errorf("HelmOperatorStatus() = %v, want %v", got, tt.want)
			}
		})
	}
}
