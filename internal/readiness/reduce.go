package readiness

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// keptMetadata are the metadata fields kstatus reads (generation and
// deletionTimestamp) and those a cache needs to index and compare copies.
var keptMetadata = []string{"name", "namespace", "uid", "resourceVersion", "generation", "deletionTimestamp", "creationTimestamp"}

// keptSpecTrees are the nested spec fields kstatus reads (its other spec
// reads are top-level scalars: replicas, parallelism, completions, type,
// clusterIP, progressDeadlineSeconds, which Reduce keeps), and a
// workload's Pod selector, by which the Pods of a workload that is not
// ready are read to say why (PodReason).
var keptSpecTrees = []string{"updateStrategy", "selector"}

// Reduce returns the part of an object its readiness depends on: the
// status whole, the spec's top-level scalars and update strategy, and the
// metadata kstatus reads. Compute gives the same answer for an object and
// its reduction; a cache of reductions holds a Deployment in a few hundred
// bytes instead of its pod template, labels and annotations.
func Reduce(u *unstructured.Unstructured) *unstructured.Unstructured {
	out := map[string]any{}
	for _, k := range []string{"apiVersion", "kind", "status"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for _, k := range keptMetadata {
			if v, ok := md[k]; ok {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		s := map[string]any{}
		for k, v := range spec {
			switch v.(type) {
			case map[string]any, []any:
			default:
				s[k] = v
			}
		}
		for _, k := range keptSpecTrees {
			if v, ok := spec[k]; ok {
				s[k] = v
			}
		}
		out["spec"] = s
	}
	return &unstructured.Unstructured{Object: out}
}
