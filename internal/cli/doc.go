// Package cli implements the chartkeeper command line: sub-commands, their
// flags and exit codes. It parses and validates input, then hands over to
// the operator package; it holds no reconcile logic.
//
// Exit codes: 0 success, 1 runtime failure, 2 bad usage or configuration
// (unknown flag, malformed watches file).
package cli
