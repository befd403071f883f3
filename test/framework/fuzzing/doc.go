// Package fuzzing holds what the project's fuzz tests share to build
// their inputs: YAMLString quotes a fuzzed string for a YAML document
// (watches.yaml) the way a person could write it.
package fuzzing
