package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// What other harnesses (test/soak) reuse from the benchmark: reading an
// operator's Prometheus endpoint and a process's CPU time.

// ScrapeMetrics GETs a Prometheus text endpoint (an operator's /metrics)
// and returns, for each metric family, the sum of its series' values
// (counters, gauges and untyped metrics; histograms and summaries count
// their observations): "go_goroutines", "process_open_fds",
// RequestsMetric summed over verbs and resources, and so on.
func ScrapeMetrics(ctx context.Context, url string) (map[string]float64, error) {
	families, err := operatorMetrics(ctx, url)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(families))
	for name, fam := range families {
		sum := 0.0
		for _, m := range fam.GetMetric() {
			switch {
			case m.Counter != nil:
				sum += m.GetCounter().GetValue()
			case m.Gauge != nil:
				sum += m.GetGauge().GetValue()
			case m.Untyped != nil:
				sum += m.GetUntyped().GetValue()
			case m.Histogram != nil:
				sum += float64(m.GetHistogram().GetSampleCount())
			case m.Summary != nil:
				sum += float64(m.GetSummary().GetSampleCount())
			}
		}
		out[name] = sum
	}
	return out, nil
}

// operatorMetrics GETs an operator's metrics endpoint and parses it.
func operatorMetrics(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the operator's metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the operator's metrics: %s", resp.Status)
	}
	return parseMetrics(resp.Body, "the operator's")
}

// parseMetrics parses a Prometheus text exposition; whose ("the API
// server's") names its source in the error.
func parseMetrics(r io.Reader, whose string) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return nil, fmt.Errorf("parsing %s metrics: %w", whose, err)
	}
	return families, nil
}

// RequestsMetric is chartkeeper's own count of the API requests it sends,
// by verb and resource.
const RequestsMetric = requestsMetric

// CPUSeconds is the user plus system CPU time pid has used so far
// (/proc/<pid>/stat).
func CPUSeconds(pid int) (float64, error) {
	s, err := readCPU(pid)
	return s.seconds, err
}
