// Package api defines what chartkeeper writes into the Kubernetes API: the
// status of every custom resource it reconciles (conditions, release
// summary, remediation bookkeeping), the condition types and reasons, and
// the finalizer, labels and annotations it puts on objects.
//
// Custom resources are handled as unstructured objects (their kinds come
// from watches.yaml); Status is converted to and from their .status field.
package api
