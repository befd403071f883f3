package cli

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

func TestPredecessorFlags(t *testing.T) {
	own := watches.Watch{ReconcilePeriod: &metav1.Duration{Duration: 5 * time.Second}, MaxConcurrentReconciles: ptr.To(4)}
	tests := []struct {
		name       string
		args       []string
		wantErr    string
		period     []time.Duration // per watch; -1: unset
		concurrent []int           // per watch; 0: unset
		leader     bool
		metrics    string
	}{
		{name: "none given: chartkeeper's defaults", period: []time.Duration{-1, 5 * time.Second}, concurrent: []int{0, 4}, metrics: "127.0.0.1:8080"},
		{name: "defaults of watches without their own", args: []string{"--reconcile-period", "1m", "--max-concurrent-reconciles", "8"},
			period: []time.Duration{time.Minute, 5 * time.Second}, concurrent: []int{8, 4}, metrics: "127.0.0.1:8080"},
		{name: "zero period given", args: []string{"--reconcile-period=0s"}, period: []time.Duration{0, 5 * time.Second}, concurrent: []int{0, 4}, metrics: "127.0.0.1:8080"},
		{name: "deprecated names", args: []string{"--metrics-addr", ":9090", "--enable-leader-election"},
			period: []time.Duration{-1, 5 * time.Second}, concurrent: []int{0, 4}, leader: true, metrics: ":9090"},
		{name: "accepted no-op", args: []string{"--suppress-override-values", "--enable-http2=false"},
			period: []time.Duration{-1, 5 * time.Second}, concurrent: []int{0, 4}, metrics: "127.0.0.1:8080"},
		{name: "http2 refused", args: []string{"--enable-http2"}, wantErr: "--enable-http2"},
		{name: "component config refused", args: []string{"--config", "controller_manager_config.yaml"}, wantErr: "ComponentConfig"},
		{name: "zero concurrency refused", args: []string{"--max-concurrent-reconciles", "0"}, wantErr: "at least 1"},
		{name: "negative period refused", args: []string{"--reconcile-period", "-1s"}, wantErr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f runFlags
			fs := flag.NewFlagSet("run", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			f.bind(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			ws := []watches.Watch{{}, own}
			err := f.predecessor.apply(ws)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range ws {
				got := time.Duration(-1)
				if w.ReconcilePeriod != nil {
					got = w.ReconcilePeriod.Duration
				}
				if got != tt.period[i] {
					t.Errorf("watch %d: reconcilePeriod %v, want %v", i, got, tt.period[i])
				}
				n := 0
				if w.MaxConcurrentReconciles != nil {
					n = *w.MaxConcurrentReconciles
				}
				if n != tt.concurrent[i] {
					t.Errorf("watch %d: maxConcurrentReconciles %d, want %d", i, n, tt.concurrent[i])
				}
			}
			if f.leader.Enabled != tt.leader || f.metricsAddr != tt.metrics {
				t.Errorf("leader %v metrics %q, want %v %q", f.leader.Enabled, f.metricsAddr, tt.leader, tt.metrics)
			}
		})
	}
}
