// Package watches loads and validates watches.yaml, the file that maps each
// custom resource kind (group/version/kind) to the Helm chart that backs it.
//
// The format is a superset of the one used by operator-framework's
// helm-operator-plugins: a file written for that project loads unchanged.
// Relative chart paths are resolved against the directory holding the
// watches file. Load reports every problem it finds at once, each naming the
// entry (by index and kind) and the field at fault, so that a malformed file
// can be fixed in one pass; callers treat any error from Load as a
// configuration error (exit code 2 for the CLI).
package watches
