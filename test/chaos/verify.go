package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// verifier checks, after the faults, that every release converged and
// nothing leaked.
type verifier struct {
	cs         kubernetes.Interface
	w          *workload
	namespaces []string
	maxHistory int
}

// Problem is one thing found wrong; Subject is the custom resource or the
// object it concerns.
type Problem struct {
	Subject string `json:"subject"`
	What    string `json:"what"`
}

// check returns every problem found now; none means converged and clean.
func (v *verifier) check(ctx context.Context) ([]Problem, error) {
	var out []Problem
	owners := map[string]slot{} // owner annotation -> slot
	for _, s := range v.w.snapshot() {
		owners[ownerKey(s)] = s
		var ps []string
		var err error
		if s.live {
			ps, err = v.checkLive(ctx, s)
		} else {
			ps, err = v.checkGone(ctx, s)
		}
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			out = append(out, Problem{Subject: s.key.String(), What: p})
		}
	}
	leaks, err := v.leaks(ctx, owners)
	return append(out, leaks...), err
}

func ownerKey(s slot) string {
	return fmt.Sprintf("%s/%s/%s/%s", gvk.Group, gvk.Kind, s.key.Namespace, s.key.Name)
}

// checkLive: the custom resource is Ready for its generation, its latest
// revision is deployed and is the one in its status, history is bounded,
// and the released objects are what its spec asks for.
func (v *verifier) checkLive(ctx context.Context, s slot) ([]string, error) {
	u, err := v.w.client(s.key).Get(ctx, s.key.Name, metav1.GetOptions{})
	if err != nil {
		return []string{"custom resource: " + err.Error()}, nil
	}
	var ps []string
	st, err := api.StatusOf(u)
	if err != nil {
		return []string{"unreadable status: " + err.Error()}, nil
	}
	if r := meta.FindStatusCondition(st.Conditions, api.ConditionReady); r == nil || r.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() {
		ps = append(ps, fmt.Sprintf("not Ready for generation %d (observed %d): %s", u.GetGeneration(), st.ObservedGeneration, describe(st.Conditions)))
	}
	h, err := releaseHistory(ctx, v.cs, s.key)
	if err != nil {
		return nil, err
	}
	if h.LatestStatus != statusDeployed {
		ps = append(ps, fmt.Sprintf("latest revision %d is %q", h.Latest, h.LatestStatus))
	}
	if st.Release == nil || st.Release.Revision != h.Latest {
		ps = append(ps, fmt.Sprintf("status names revision %v, latest stored is %d", st.Release, h.Latest))
	}
	if v.maxHistory > 0 && h.Revisions > v.maxHistory {
		ps = append(ps, fmt.Sprintf("%d revisions stored, maxHistory is %d", h.Revisions, v.maxHistory))
	}
	objs, err := v.objects(ctx, s)
	if err != nil {
		return nil, err
	}
	return append(ps, objs...), nil
}

// objects compares the released objects with the spec.
func (v *verifier) objects(ctx context.Context, s slot) ([]string, error) {
	ns, name, want := s.key.Namespace, s.key.Name, s.spec
	var ps []string
	get := metav1.GetOptions{}
	if d, err := v.cs.AppsV1().Deployments(ns).Get(ctx, name, get); err != nil {
		ps = append(ps, "Deployment: "+err.Error())
	} else if d.Spec.Replicas == nil || int(*d.Spec.Replicas) != want.Replicas {
		ps = append(ps, fmt.Sprintf("Deployment has %v replicas, spec asks %d", d.Spec.Replicas, want.Replicas))
	}
	if svc, err := v.cs.CoreV1().Services(ns).Get(ctx, name, get); err != nil {
		ps = append(ps, "Service: "+err.Error())
	} else if len(svc.Spec.Ports) != 1 || int(svc.Spec.Ports[0].Port) != want.Port {
		ps = append(ps, fmt.Sprintf("Service ports %v, spec asks %d", svc.Spec.Ports, want.Port))
	}
	cms, err := v.cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: api.LabelManaged + "=true"})
	if err != nil {
		return nil, err
	}
	expected := map[string]bool{name + "-config": true}
	for i := range want.ConfigMaps {
		expected[fmt.Sprintf("%s-extra-%d", name, i)] = true
	}
	for _, cm := range cms.Items {
		if cm.Annotations[api.AnnotationOwner] != ownerKey(s) {
			continue
		}
		if !expected[cm.Name] {
			ps = append(ps, "ConfigMap "+cm.Name+" is not in the spec's release")
			continue
		}
		delete(expected, cm.Name)
		if cm.Data["data"] != want.Data {
			ps = append(ps, fmt.Sprintf("ConfigMap %s holds %q, spec asks %q", cm.Name, cm.Data["data"], want.Data))
		}
	}
	if len(expected) > 0 {
		missing := make([]string, 0, len(expected))
		for n := range expected {
			missing = append(missing, n)
		}
		slices.Sort(missing)
		ps = append(ps, fmt.Sprintf("%d ConfigMaps missing: %s", len(missing), strings.Join(first(missing, 5), ", ")))
	}
	return ps, nil
}

// checkGone: a deleted custom resource is gone with its release.
func (v *verifier) checkGone(ctx context.Context, s slot) ([]string, error) {
	var ps []string
	if _, err := v.w.client(s.key).Get(ctx, s.key.Name, metav1.GetOptions{}); err == nil {
		ps = append(ps, "deleted custom resource still exists")
	}
	h, err := releaseHistory(ctx, v.cs, s.key)
	if err != nil {
		return nil, err
	}
	if h.Revisions > 0 {
		ps = append(ps, fmt.Sprintf("%d release Secrets left after deletion (latest %d %s)", h.Revisions, h.Latest, h.LatestStatus))
	}
	return ps, nil
}

// leaks finds release Secrets and released objects of no live custom
// resource (objects of live ones are checked by objects).
func (v *verifier) leaks(ctx context.Context, owners map[string]slot) ([]Problem, error) {
	var out []Problem
	for _, ns := range v.namespaces {
		secrets, err := v.cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
		if err != nil {
			return nil, err
		}
		for _, sec := range secrets.Items {
			s, ok := owners[fmt.Sprintf("%s/%s/%s/%s", gvk.Group, gvk.Kind, ns, sec.Labels["name"])]
			if !ok || !s.live {
				out = append(out, Problem{Subject: "Secret " + ns + "/" + sec.Name, What: "release Secret of no live custom resource"})
			}
		}
		objs, err := v.released(ctx, ns)
		if err != nil {
			return nil, err
		}
		for kind, list := range objs {
			for _, o := range list {
				if o.GetDeletionTimestamp() != nil {
					continue // going: the garbage collector or Helm is on it
				}
				if s, ok := owners[o.GetAnnotations()[api.AnnotationOwner]]; !ok || !s.live {
					out = append(out, Problem{Subject: kind + " " + ns + "/" + o.GetName(), What: "released object of no live custom resource"})
				}
			}
		}
	}
	return out, nil
}

// released lists the objects chartkeeper released in ns, by kind.
func (v *verifier) released(ctx context.Context, ns string) (map[string][]metav1.Object, error) {
	sel := metav1.ListOptions{LabelSelector: api.LabelManaged + "=true"}
	out := map[string][]metav1.Object{}
	cms, err := v.cs.CoreV1().ConfigMaps(ns).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range cms.Items {
		out["ConfigMap"] = append(out["ConfigMap"], &cms.Items[i])
	}
	svcs, err := v.cs.CoreV1().Services(ns).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range svcs.Items {
		out["Service"] = append(out["Service"], &svcs.Items[i])
	}
	deps, err := v.cs.AppsV1().Deployments(ns).List(ctx, sel)
	if err != nil {
		return nil, err
	}
	for i := range deps.Items {
		out["Deployment"] = append(out["Deployment"], &deps.Items[i])
	}
	return out, nil
}

func describe(cs []metav1.Condition) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s (%s: %s)", c.Type, c.Status, c.Reason, c.Message))
	}
	if len(parts) == 0 {
		return "no conditions"
	}
	return strings.Join(parts, "; ")
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "…")
	}
	return s
}
