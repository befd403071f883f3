package soak

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// title heads the plot.
func (res *Result) title() string {
	c := res.Config
	return fmt.Sprintf("chartkeeper soak, %s: %d custom resources, %.1f changes/s for %s (maxHistory %d)",
		time.Now().UTC().Format("2006-01-02"), c.CRs, c.Rate, c.Duration, c.MaxHistory)
}

// Print writes what the run did and the verdict.
func (res *Result) Print(w io.Writer) {
	c := res.Config
	fmt.Fprintf(w, "soak: %d custom resources in namespaces of %d, %.1f changes/s for %s, a sample every %s, maxHistory %d, seed %d\n",
		c.CRs, c.PerNamespace, c.Rate, c.Duration, c.Sample, c.MaxHistory, c.Seed)
	fmt.Fprintf(w, "set-up (create all, all Ready): %.0fs; converged after the churn: %.0fs\n", res.SetupSeconds, res.ConvergeSeconds)
	if res.Shortened != "" {
		fmt.Fprintln(w, res.Shortened)
	}
	var writes []string
	total := 0
	for _, k := range slices.Sorted(maps.Keys(res.Writes)) {
		writes = append(writes, fmt.Sprintf("%s %d", k, res.Writes[k]))
		total += res.Writes[k]
	}
	if res.ChurnSeconds > 0 {
		fmt.Fprintf(w, "churn: %d writes in %.0fs (%.2f/s): %s; failed (API error or no answer in 30s): %d\n",
			total, res.ChurnSeconds, float64(total)/res.ChurnSeconds, strings.Join(writes, ", "), res.Failed)
	}
	if len(res.Samples) > 0 {
		fmt.Fprintf(w, "samples: %d; %s\n", len(res.Samples), summary(res.Samples))
	}
	res.Verdict.Print(w)
}

// summary gives the range of each gated series and the mean API rate.
func summary(samples []Sample) string {
	var parts []string
	for _, s := range Series {
		lo, hi := s.Value(samples[0]), s.Value(samples[0])
		for _, x := range samples {
			lo, hi = min(lo, s.Value(x)), max(hi, s.Value(x))
		}
		parts = append(parts, fmt.Sprintf("%s %.0f–%.0f", s.Name, lo, hi))
	}
	return strings.Join(parts, ", ")
}
