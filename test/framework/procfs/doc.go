// Package procfs reads what the project needs from Linux's /proc: the
// fields of a process's stat file (state, start time, CPU times) and its
// status lines (peak memory). Used by the local cluster's process
// bookkeeping and by the benchmark.
package procfs
