package readiness

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Result is the readiness of a set of objects.
type Result struct {
	// Ready: every object is Current.
	Ready bool
	// Failed: at least one object reports a failure kstatus calls Failed.
	Failed bool
	// NotReady names each object that is not Current, with kstatus' message,
	// sorted; empty when Ready.
	NotReady []string
}

// Message joins NotReady into one human sentence (at most 5 objects named).
func (r Result) Message() string {
	if r.Ready {
		return "all released objects are ready"
	}
	items := r.NotReady
	more := ""
	if len(items) > 5 {
		more = fmt.Sprintf(" and %d more", len(items)-5)
		items = items[:5]
	}
	return "not ready: " + strings.Join(items, "; ") + more
}

// Check returns whether one object is Current; if not, a line naming it
// and saying why, and whether kstatus calls it Failed.
func Check(o *unstructured.Unstructured) (current, failed bool, why string) {
	name := fmt.Sprintf("%s %s", o.GetKind(), o.GetName())
	st, err := status.Compute(o)
	switch {
	case err != nil:
		return false, false, fmt.Sprintf("%s: status unreadable: %v", name, err)
	case st.Status == status.CurrentStatus:
		return true, false, ""
	default:
		return false, st.Status == status.FailedStatus, fmt.Sprintf("%s: %s: %s", name, st.Status, st.Message)
	}
}

// Add folds one object's Check into the result.
func (r *Result) Add(current, failed bool, why string) {
	if current {
		return
	}
	r.Ready = false
	r.Failed = r.Failed || failed
	r.NotReady = append(r.NotReady, why)
	sort.Strings(r.NotReady)
}

// Compute returns the readiness of objs, each read in full from the cluster.
func Compute(objs []*unstructured.Unstructured) Result {
	res := Result{Ready: true}
	for _, o := range objs {
		res.Add(Check(o))
	}
	return res
}

// alwaysCurrent lists kinds that kstatus considers Current as soon as they
// exist: they have no status to wait for, so their readiness needs no read.
var alwaysCurrent = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}:      true,
	{Kind: "Secret"}:         true,
	{Kind: "ServiceAccount"}: true,
	{Kind: "Endpoints"}:      true,
	{Kind: "LimitRange"}:     true,
	{Kind: "ResourceQuota"}:  true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:              true,
	{Group: "networking.k8s.io", Kind: "IngressClass"}:               true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:              true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                  true,
}

// NeedsStatus reports whether an object of this kind must be read in full
// to tell its readiness; for the others, existing is enough.
func NeedsStatus(gk schema.GroupKind) bool { return !alwaysCurrent[gk] }

// NeedsStatusOf is NeedsStatus for one released object: it also knows that
// kstatus waits only for Services of type LoadBalancer (for their IP), so a
// ClusterIP, NodePort or ExternalName Service is ready once it exists.
func NeedsStatusOf(desired *unstructured.Unstructured) bool {
	gvk := desired.GroupVersionKind()
	if gvk.Group == "" && gvk.Kind == "Service" {
		t, _, _ := unstructured.NestedString(desired.Object, "spec", "type")
		return t == "LoadBalancer"
	}
	return NeedsStatus(gvk.GroupKind())
}
