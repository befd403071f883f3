package bench

import (
	"bytes"
	"context"
	"fmt"

	"k8s.io/client-go/kubernetes"
)

// dispatchedMetric counts, per FlowSchema, the requests the API server's
// flow control let through to be served.
const dispatchedMetric = "apiserver_flowcontrol_dispatched_requests_total"

// cutOffMetric counts, per resource, the watches the API server closed
// because their client did not keep up (their buffer stayed full).
const cutOffMetric = "apiserver_terminated_watchers_total"

// requestCounter reads, from the API server's metrics, one FlowSchema's
// count of requests and the count of watches cut off.
type requestCounter struct {
	cs         kubernetes.Interface
	flowSchema string
}

// counts is what requestCounter reads, so far: the requests classified by
// the FlowSchema (none yet: 0), and the watches of every client and
// resource the API server closed as unresponsive.
type counts struct{ requests, cutOff float64 }

func (r requestCounter) read(ctx context.Context) (counts, error) {
	raw, err := r.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return counts{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	families, err := parseMetrics(bytes.NewReader(raw), "the API server's")
	if err != nil {
		return counts{}, err
	}
	fam, ok := families[dispatchedMetric]
	if !ok {
		return counts{}, fmt.Errorf("the API server has no %s metric (is API priority and fairness off?)", dispatchedMetric)
	}
	var out counts
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "flow_schema" && l.GetValue() == r.flowSchema {
				out.requests += m.GetCounter().GetValue()
			}
		}
	}
	// Absent until the first watch is cut off.
	for _, m := range families[cutOffMetric].GetMetric() {
		out.cutOff += m.GetCounter().GetValue()
	}
	return out, nil
}

// requestsMetric is chartkeeper's own count of the requests it sends, by
// verb and resource (internal/metrics).
const requestsMetric = "chartkeeper_api_requests_total"

// operatorRequests reads an operator's count of its own API requests by
// verb and resource from its metrics endpoint, keyed "verb resource".
func operatorRequests(ctx context.Context, url string) (map[string]float64, error) {
	families, err := operatorMetrics(ctx, url)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families[requestsMetric].GetMetric() {
		var verb, resource string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			}
		}
		out[verb+" "+resource] += m.GetCounter().GetValue()
	}
	return out, nil
}

// subtract returns b - a per key, leaving out keys that did not change.
func subtract(b, a map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range b {
		if d := v - a[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
