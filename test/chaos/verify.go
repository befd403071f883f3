package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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
	kept       *keptTracker
	// explainBad: a live resource whose spec cannot be released is checked
	// for a settled, explained failure (checkExplained) instead.
	explainBad bool
	// lists holds, during one check, each namespace's release Secrets and
	// released ConfigMaps, listed once (not once per resource).
	lists map[string]*nsLists
}

type nsLists struct {
	secrets    map[string][]corev1.Secret // by release name
	configMaps *corev1.ConfigMapList
}

// list returns ns's lists, listing them on first use in a check.
func (v *verifier) list(ctx context.Context, ns string) (*nsLists, error) {
	if l, ok := v.lists[ns]; ok {
		return l, nil
	}
	secrets, err := v.cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		return nil, err
	}
	cms, err := v.cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{LabelSelector: api.LabelManaged + "=true"})
	if err != nil {
		return nil, err
	}
	l := &nsLists{secrets: map[string][]corev1.Secret{}, configMaps: cms}
	for _, sec := range secrets.Items {
		l.secrets[sec.Labels["name"]] = append(l.secrets[sec.Labels["name"]], sec)
	}
	if v.lists != nil {
		v.lists[ns] = l
	}
	return l, nil
}

// history is releaseHistory from the check's lists.
func (v *verifier) history(ctx context.Context, key types.NamespacedName) (history, error) {
	l, err := v.list(ctx, key.Namespace)
	if err != nil {
		return history{}, err
	}
	return historyOf(l.secrets[key.Name]), nil
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
	v.lists = map[string]*nsLists{}
	defer func() { v.lists = nil }()
	owners := map[string]slot{} // owner annotation -> slot
	slots := v.w.snapshot()
	for _, s := range slots {
		owners[ownerKey(s)] = s
		var ps []string
		var err error
		if s.live && v.explainBad && s.spec.Port == badPort {
			ps, err = v.checkExplained(ctx, s)
		} else if s.live {
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
	if err != nil {
		return nil, err
	}
	out = append(out, leaks...)
	if v.kept != nil {
		kps, err := v.kept.check(ctx, slots)
		if err != nil {
			return nil, err
		}
		out = append(out, kps...)
	}
	return out, nil
}

func ownerKey(s slot) string {
	return fmt.Sprintf("%s/%s/%s/%s", s.kind.gvk.Group, s.kind.gvk.Kind, s.key.Namespace, s.key.Name)
}

// checkLive: the custom resource is Ready for its generation, its latest
// revision is deployed and is the one in its status, history is bounded,
// and the released objects are what its spec asks for.
func (v *verifier) checkLive(ctx context.Context, s slot) ([]string, error) {
	u, err := v.w.client(&s).Get(ctx, s.key.Name, metav1.GetOptions{})
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
	h, err := v.history(ctx, s.key)
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
		ps = append(ps, fmt.Sprintf("Deployment has %s replicas, spec asks %d", replicasOf(d.Spec.Replicas), want.Replicas))
	}
	if svc, err := v.cs.CoreV1().Services(ns).Get(ctx, name, get); err != nil {
		ps = append(ps, "Service: "+err.Error())
	} else if len(svc.Spec.Ports) != 1 || int(svc.Spec.Ports[0].Port) != want.Port {
		ps = append(ps, fmt.Sprintf("Service ports %v, spec asks %d", svc.Spec.Ports, want.Port))
	}
	l, err := v.list(ctx, ns)
	if err != nil {
		return nil, err
	}
	cms := l.configMaps
	expected := map[string]bool{name + "-config": true}
	for i := range want.ConfigMaps {
		expected[fmt.Sprintf("%s-extra-%d", name, i)] = true
	}
	if s.kind.kept {
		expected[name+keptSuffix] = true // its data is checked by the kept check
	}
	for _, cm := range cms.Items {
		if cm.Annotations[api.AnnotationOwner] != ownerKey(s) {
			continue
		}
		if cm.Name == name+keptSuffix || cm.Name == name+hookSuffix {
			delete(expected, cm.Name)
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
	if _, err := v.w.client(&s).Get(ctx, s.key.Name, metav1.GetOptions{}); err == nil {
		ps = append(ps, "deleted custom resource still exists")
	}
	h, err := v.history(ctx, s.key)
	if err != nil {
		return nil, err
	}
	if h.Revisions > 0 {
		ps = append(ps, fmt.Sprintf("%d release Secrets left after deletion (latest %d %s)", h.Revisions, h.Latest, h.LatestStatus))
	}
	return ps, nil
}

// leaks finds release Secrets and released objects of no live custom
// resource (objects of live ones are checked by objects). Kept objects
// outlive their resource on purpose: the kept check looks after them.
func (v *verifier) leaks(ctx context.Context, owners map[string]slot) ([]Problem, error) {
	var out []Problem
	releases := map[string]slot{} // namespace/release name -> slot
	for _, s := range owners {
		releases[s.key.String()] = s
	}
	for _, ns := range v.namespaces {
		l, err := v.list(ctx, ns)
		if err != nil {
			return nil, err
		}
		for _, secs := range l.secrets {
			sec := secs[0]
			s, ok := releases[ns+"/"+sec.Labels["name"]]
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
				if kept(o) || strings.HasSuffix(o.GetName(), hookSuffix) {
					continue // kept on purpose; a hook's object outlives the release as with helm
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
	l, err := v.list(ctx, ns)
	if err != nil {
		return nil, err
	}
	cms := l.configMaps
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

// replicasOf prints a Deployment's replicas ("unset" for nil).
func replicasOf(r *int32) string {
	if r == nil {
		return "unset"
	}
	return fmt.Sprint(*r)
}
