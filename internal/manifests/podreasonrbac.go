package manifests

import "github.com/chartkeeper/chartkeeper/internal/readiness"

// podReasonRules adds what the engine reads to say why a released
// workload is not ready (internal/release/podreasons.go) when the charts
// release one (a Deployment, StatefulSet, DaemonSet, ReplicaSet, Job or
// Pod): its Pods, listed by its selector (list), and the claims of those
// not scheduled (get). Without them the readiness message only lacks the
// reason.
func podReasonRules(rs *ruleSet, renders []Rendered) {
	for _, gk := range releasedKinds(renders) {
		if readiness.RunsPods(gk) {
			rs.add("", "pods", "list")
			rs.add("", "persistentvolumeclaims", "get")
			return
		}
	}
}
