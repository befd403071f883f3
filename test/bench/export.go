package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"

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
	body, err := fetchMetrics(ctx, url)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		return nil, fmt.Errorf("parsing the operator's metrics: %w", err)
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

// fetchMetrics GETs a metrics endpoint and returns its body.
func fetchMetrics(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the operator's metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("reading the operator's metrics: %s", resp.Status)
	}
	return resp.Body, nil
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
