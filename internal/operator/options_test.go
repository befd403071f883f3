package operator

import (
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestOptionsValidate(t *testing.T) {
	noID := func(o *options) { o.leader.ID = "" }
	tests := []struct {
		name    string
		opts    []Option
		wantErr []string // substrings of the error; none: valid
	}{
		{name: "defaults"},
		{name: "loopback addresses", opts: []Option{WithMetricsAddress("127.0.0.1:9090"), WithProbeAddress("127.0.0.1:9091"), WithPprofAddress("127.0.0.1:6060")}},
		{name: "all interfaces", opts: []Option{WithMetricsAddress(":8080"), WithProbeAddress(":8081")}},
		{name: "0 disables metrics and probes", opts: []Option{WithMetricsAddress("0"), WithProbeAddress("0"), WithPprofAddress("0")}},
		{name: "empty pprof address is off", opts: []Option{WithPprofAddress("")}},
		{name: "empty metrics address", opts: []Option{WithMetricsAddress("")}, wantErr: []string{`metrics address ""`}},
		{name: "empty probe address", opts: []Option{WithProbeAddress("")}, wantErr: []string{`probe address ""`}},
		{name: "metrics address without port", opts: []Option{WithMetricsAddress("localhost")}, wantErr: []string{`metrics address "localhost"`}},
		{name: "bad pprof address", opts: []Option{WithPprofAddress("6060")}, wantErr: []string{`pprof address "6060"`}},
		{name: "every bad address is reported", opts: []Option{WithMetricsAddress("a"), WithProbeAddress("b"), WithPprofAddress("c")},
			wantErr: []string{`metrics address "a"`, `probe address "b"`, `pprof address "c"`}},
		{name: "leader election with the default ID", opts: []Option{WithLeaderElection(true, "", "")}},
		{name: "leader election with an ID and namespace", opts: []Option{WithLeaderElection(true, "shard-a.example.com", "ops")}},
		{name: "leader election without an ID", opts: []Option{WithLeaderElection(true, "", ""), noID}, wantErr: []string{"leader election needs an ID"}},
		{name: "no ID needed without leader election", opts: []Option{noID}},
		{name: "custom lease timing", opts: []Option{WithLeaseTiming(LeaseTiming{LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 5 * time.Second})}},
		{name: "renew deadline equal to lease duration", opts: []Option{WithLeaseTiming(LeaseTiming{LeaseDuration: 10 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second})},
			wantErr: []string{"lease duration > renew deadline > retry period > 0"}},
		{name: "retry period above renew deadline", opts: []Option{WithLeaseTiming(LeaseTiming{LeaseDuration: 15 * time.Second, RenewDeadline: 5 * time.Second, RetryPeriod: 6 * time.Second})},
			wantErr: []string{"got 15s, 5s, 6s"}},
		{name: "zero retry period", opts: []Option{WithLeaseTiming(LeaseTiming{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second})},
			wantErr: []string{"lease duration > renew deadline > retry period > 0"}},
		{name: "unset lease timing", opts: []Option{WithLeaseTiming(LeaseTiming{})}, wantErr: []string{"got 0s, 0s, 0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := defaultOptions()
			for _, opt := range tc.opts {
				opt(&o)
			}
			err := o.validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("validate() = nil, want an error with %q", tc.wantErr)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("validate() = %v, want it to say %q", err, want)
				}
			}
		})
	}
}

// TestNewRefuses: New's errors are configuration errors found before
// anything is built; the config points nowhere, so nothing is contacted.
func TestNewRefuses(t *testing.T) {
	nowhere := &rest.Config{Host: "https://127.0.0.1:1"}
	tests := []struct {
		name    string
		opts    []Option
		wantErr string
	}{
		{name: "no watches", wantErr: "no watches"},
		{name: "invalid options before watches", opts: []Option{WithProbeAddress("nope")}, wantErr: `probe address "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op, err := New(nowhere, nil, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("New() = %v, %v; want an error with %q", op, err, tc.wantErr)
			}
			if op != nil {
				t.Errorf("New() returned an operator with its error")
			}
		})
	}
}
