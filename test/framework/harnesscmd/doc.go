// Package harnesscmd holds what the commands of the long harnesses share
// (test/bench/cmd, test/chaos/cmd, test/soak/cmd: make bench, make chaos,
// make soak): how they end on an error or a signal, and the local cluster
// of their own they bring up and purge at the end.
package harnesscmd
