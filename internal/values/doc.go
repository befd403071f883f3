// Package values turns a custom resource into Helm values and fingerprints
// what a release is made of.
//
// Compute takes the resource's spec and sets the watch's overrideValues on
// top (Helm --set syntax). Under the spec, Merge, ParseDocument and
// SetString stack the values of a watch's valuesFrom, as Helm stacks -f
// files and --set-string flags. Digest fingerprints a chart and a set of values:
// chartkeeper stores it as a label on each release revision and compares it
// with the desired digest to decide whether an upgrade is due, so the steady
// state never renders a chart or asks Helm anything.
package values
