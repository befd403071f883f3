package cli

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// dashboardFile is the Grafana dashboard of the operator's metrics.
var dashboardFile = filepath.Join("..", "..", "config", "grafana", "chartkeeper-dashboard.json")

// TestDashboardMetricsExist: every metric the dashboard's queries use is
// one this binary registers (controller-runtime's and chartkeeper's), so
// that a renamed or removed metric cannot leave a panel empty.
func TestDashboardMetricsExist(t *testing.T) {
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	exprs := dashboardExprs(dash)
	if len(exprs) == 0 {
		t.Fatalf("%s has no queries", dashboardFile)
	}
	names := map[string]bool{}
	for _, e := range exprs {
		for _, n := range metricNames(e) {
			names[n] = true
		}
	}
	for _, n := range slices.Sorted(maps.Keys(names)) {
		if !registered(t, n) {
			t.Errorf("the dashboard queries %s, which the operator does not register", n)
		}
	}
	for _, want := range []string{"controller_runtime_reconcile_total", "chartkeeper_helm_actions_total", "chartkeeper_helm_action_duration_seconds_bucket",
		"chartkeeper_action_failures_total", "chartkeeper_remediations_total", "chartkeeper_releases", "workqueue_depth"} {
		if !names[want] {
			t.Errorf("the dashboard has no panel on %s", want)
		}
	}
}

// TestRegistered: the check itself tells a registered metric (a
// histogram's series too) from an unknown one.
func TestRegistered(t *testing.T) {
	for name, want := range map[string]bool{
		"chartkeeper_helm_actions_total":                  true,
		"chartkeeper_helm_action_duration_seconds_bucket": true,
		"controller_runtime_reconcile_total":              true,
		"workqueue_depth":                                 true,
		"chartkeeper_no_such_metric_total":                false,
	} {
		if got := registered(t, name); got != want {
			t.Errorf("registered(%s) = %v, want %v", name, got, want)
		}
	}
}

func TestMetricNames(t *testing.T) {
	tests := []struct{ expr, want string }{
		{`sum(rate(controller_runtime_reconcile_total{controller=~"chartkeeper-.*"}[$__rate_interval])) by (controller, result)`,
			"controller_runtime_reconcile_total"},
		{`histogram_quantile(0.95, sum by (le, action) (rate(chartkeeper_helm_action_duration_seconds_bucket[5m])))`,
			"chartkeeper_helm_action_duration_seconds_bucket"},
		{`sum without (instance) (chartkeeper_releases{state!="InSync"}) / on(kind) group_left sum(chartkeeper_releases) > bool 0`,
			"chartkeeper_releases chartkeeper_releases"},
		{`increase(chartkeeper_remediations_total{result="failure"}[1h] offset 1d) or vector(0)`, "chartkeeper_remediations_total"},
		{`max(workqueue_depth{name=~"chartkeeper-$kind.*", controller!=""})`, "workqueue_depth"},
	}
	for _, tc := range tests {
		if got := strings.Join(metricNames(tc.expr), " "); got != tc.want {
			t.Errorf("metricNames(%s) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

// dashboardExprs returns every "expr" of the dashboard's targets.
func dashboardExprs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if e, ok := v["expr"].(string); ok {
			out = append(out, e)
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, dashboardExprs(v[k])...)
		}
	case []any:
		for _, e := range v {
			out = append(out, dashboardExprs(e)...)
		}
	}
	return out
}

var (
	// promqlDropped are the parts of a query that hold no metric names:
	// label matchers, ranges and offsets, strings, by/without/on/ignoring
	// label lists.
	promqlDropped = regexp.MustCompile(`\{[^}]*\}|\[[^\]]*\]|"[^"]*"|\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)|\boffset\s+-?[0-9a-zA-Z]+`)
	promqlIdent   = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`)
	promqlWords   = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "inf", "nan"}
)

// metricNames returns the metric names a PromQL query selects, in order:
// identifiers that are neither functions nor aggregations (followed by
// "(") nor keywords.
func metricNames(expr string) []string {
	var out []string
	for _, m := range promqlIdent.FindAllString(promqlDropped.ReplaceAllString(expr, " "), -1) {
		if strings.HasSuffix(m, "(") || slices.Contains(promqlWords, strings.ToLower(m)) {
			continue
		}
		out = append(out, m)
	}
	return out
}

// registered reports whether the operator's registry holds a metric of
// this name, or of this name without a histogram's _bucket, _sum or
// _count: registering another collector under a registered name fails.
// (A histogram with no observation yet gathers nothing, so the registry
// cannot tell its type: a _bucket of a counter would pass.)
func registered(t *testing.T, name string) bool {
	t.Helper()
	for _, n := range []string{name, strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")} {
		probe := prometheus.NewGauge(prometheus.GaugeOpts{Name: n, Help: "probe of the dashboard test"})
		err := crmetrics.Registry.Register(probe)
		if err == nil {
			crmetrics.Registry.Unregister(probe)
			continue
		}
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) || strings.Contains(err.Error(), "same fully-qualified name") {
			return true
		}
		t.Fatalf("registering a probe %s: %v", n, err)
	}
	return false
}
