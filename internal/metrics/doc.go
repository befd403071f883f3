// Package metrics defines chartkeeper's Prometheus metrics, served on the
// manager's metrics endpoint next to controller-runtime's own (reconcile
// counts and durations, work queues, client-go request counts):
//
//	chartkeeper_helm_actions_total{action,result}
//	chartkeeper_helm_action_duration_seconds{action,result}
//	chartkeeper_releases{kind,state}   custom resources per release state
//	chartkeeper_tracked_resources{store}   resources each in-memory store holds
package metrics
