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

// serverCounts is what the harness reads of the API server's metrics.
type serverCounts struct {
	// byFlowSchema is the count of requests classified by each FlowSchema
	// so far. A FlowSchema with no requests yet is absent (0).
	byFlowSchema map[string]float64
	// cutOff is the count of watches of every client and resource the API
	// server closed as unresponsive so far.
	cutOff float64
}

// apiServerCounts reads the API server's counts.
func apiServerCounts(ctx context.Context, cs kubernetes.Interface) (serverCounts, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return serverCounts{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	families, err := parseMetrics(bytes.NewReader(raw), "the API server's")
	if err != nil {
		return serverCounts{}, err
	}
	out := serverCounts{byFlowSchema: map[string]float64{}}
	fam, ok := families[dispatchedMetric]
	if !ok {
		return serverCounts{}, fmt.Errorf("the API server has no %s metric (is API priority and fairness off?)", dispatchedMetric)
	}
	for _, m := range fam.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "flow_schema" {
				out.byFlowSchema[l.GetValue()] += m.GetCounter().GetValue()
			}
		}
	}
	// Absent until the first watch is cut off.
	for _, m := range families[cutOffMetric].GetMetric() {
		out.cutOff += m.GetCounter().GetValue()
	}
	return out, nil
}

// requestCounter reads one FlowSchema's count, and the watches cut off.
type requestCounter struct {
	cs         kubernetes.Interface
	flowSchema string
}

// counts is what requestCounter reads: the FlowSchema's requests and the
// watches cut off, so far.
type counts struct{ requests, cutOff float64 }

func (r requestCounter) read(ctx context.Context) (counts, error) {
	all, err := apiServerCounts(ctx, r.cs)
	if err != nil {
		return counts{}, err
	}
	return counts{requests: all.byFlowSchema[r.flowSchema], cutOff: all.cutOff}, nil
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
