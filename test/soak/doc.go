// Package soak is chartkeeper's hour of churn (make soak): it keeps many
// custom resources under continuous spec changes, deletes and re-creates
// at a steady rate for a bounded time, and samples the operator every
// minute: its resident memory (/proc/<pid>/status VmRSS), goroutines and
// open file descriptors (its Prometheus metrics go_goroutines and
// process_open_fds), the API requests it sends (chartkeeper_api_requests_total)
// and the reconciles it runs (controller_runtime_reconcile_total), and how
// many releases are Ready. The samples go to a CSV and a plot.
//
// The verdict (verdict.go) fits a line to the second half of each series:
// the first half holds the warm-up (caches filling, release history
// reaching maxHistory), the second should be flat. A series whose fitted
// slope is more than MaxGrowth per hour of its mean has grown without
// bound as far as an hour can tell; RSS, goroutines or open files doing so
// fail the run. At the end every custom resource must be Ready for its
// latest spec.
//
// It reuses the benchmark's pieces: its chart (test/bench/chart), its
// metrics scraping and CPU reading (test/bench), and the shared framework
// (childproc, kubeops, procfs, freeport).
package soak
