package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/crdschema"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// The CRD step of an install or upgrade: chartkeeper, never Helm, applies
// the CRDs a chart ships, from crds/ (chart.CRDObjects, Helm told to skip
// them) and from its templates (taken out of the rendered manifest by the
// post-renderer's CRDs hook), through the same code, once the chart is
// rendered and before Helm applies anything else: custom resources of a
// templated CRD in the same chart then map. What it does is the watch's
// crds policy (watches.CRDPolicy*). A CRD is thus no part of any release:
// no uninstall, rollback or upgrade that drops it deletes it.

var crdGVK = schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}

// crdPoll is how often a created or replaced CRD is looked at until it is
// Established.
const crdPoll = 200 * time.Millisecond

// CRDRefusedError: the chart's CRD would break custom resources the
// cluster holds (crdschema.BreakingCRD). Terminal until the chart or spec
// changes, or a reconcile is requested (reason CRDUpgradeRefused).
type CRDRefusedError struct {
	CRD     string
	Changes []crdschema.CRDChange
}

func (e *CRDRefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "CRD %s: the chart's definition would break custom resources the cluster holds: ", e.CRD)
	for i, c := range e.Changes {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(c.String())
	}
	b.WriteString(" (crds policy create-and-replace refuses it: serve the change as a new version in the chart, or apply the CRD yourself)")
	return b.String()
}

// crdPlan is what the CRD step writes: CRDs to create, and CRDs to
// apply the chart's fields of (create-and-replace).
type crdPlan struct {
	create  []*unstructured.Unstructured
	replace []crdReplace
}

// crdReplace is one CRD create-and-replace applies: the chart's
// definition (want), the CRD as the cluster holds it (old) and as it
// would hold it once the chart's fields are applied (after).
type crdReplace struct {
	want, old, after *unstructured.Unstructured
}

// planCRDs decides, for the chart's CRDs (want) and what the cluster holds
// of them (have: nil for a missing one), what to create and replace under
// policy: skip touches nothing; create creates the missing ones;
// create-and-replace also applies the chart's fields to the existing ones
// (merged tells what the cluster would then hold: a dry run; nil: want
// as it is), unless one breaks what the cluster holds: then nothing is
// written (*CRDRefusedError).
func planCRDs(policy string, want []*unstructured.Unstructured, have map[string]*unstructured.Unstructured,
	merged func(*unstructured.Unstructured) (*unstructured.Unstructured, error)) (crdPlan, error) {
	var p crdPlan
	if policy == watches.CRDPolicySkip {
		return p, nil
	}
	for _, w := range want {
		old := have[w.GetName()]
		switch {
		case old == nil:
			p.create = append(p.create, w)
		case policy == watches.CRDPolicyCreateAndReplace && old.GetAnnotations()[api.AnnotationCRDDigest] == w.GetAnnotations()[api.AnnotationCRDDigest] && w.GetAnnotations()[api.AnnotationCRDDigest] != "":
			// Written from this very definition already: nothing to replace.
		case policy == watches.CRDPolicyCreateAndReplace:
			after := w
			if merged != nil {
				var err error
				if after, err = merged(w); err != nil {
					return crdPlan{}, err
				}
			}
			o, n := &apiextv1.CustomResourceDefinition{}, &apiextv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(old.Object, o); err != nil {
				return crdPlan{}, fmt.Errorf("reading CRD %s: %w", old.GetName(), err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(after.Object, n); err != nil {
				return crdPlan{}, &ChartError{Err: fmt.Errorf("CRD %s of the chart: %w", w.GetName(), err)}
			}
			if changes := crdschema.BreakingCRD(o, n); len(changes) > 0 {
				return crdPlan{}, &CRDRefusedError{CRD: w.GetName(), Changes: changes}
			}
			p.replace = append(p.replace, crdReplace{want: w, old: old, after: after})
		}
	}
	return p, nil
}

// chartCRDs returns the CRDs of the chart's crds/ (subcharts' included)
// and the templated ones, each labelled with the chart that applies it.
// Anything there that is not an apiextensions.k8s.io/v1 CRD is a
// *ChartError.
func chartCRDs(ch *chart.Chart, templated []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, c := range ch.CRDObjects() {
		objs, err := decodeDocs(c.File.Data)
		if err != nil {
			return nil, &ChartError{Err: fmt.Errorf("chart %s: %s: %w", ch.Name(), c.Filename, err)}
		}
		out = append(out, objs...)
	}
	out = append(out, templated...)
	seen := map[string]bool{}
	for _, u := range out {
		if u.GroupVersionKind() != crdGVK {
			return nil, &ChartError{Err: fmt.Errorf("chart %s ships %s %s among its CRDs: only %s is applied", ch.Name(), u.GetAPIVersion()+" "+u.GetKind(), u.GetName(), crdGVK.GroupVersion().String()+" CustomResourceDefinition")}
		}
		if seen[u.GetName()] {
			return nil, &ChartError{Err: fmt.Errorf("chart %s ships CRD %s twice (crds/ and templates?)", ch.Name(), u.GetName())}
		}
		seen[u.GetName()] = true
		def, err := json.Marshal(u.Object)
		if err != nil {
			return nil, &ChartError{Err: fmt.Errorf("chart %s: CRD %s: %w", ch.Name(), u.GetName(), err)}
		}
		digest := sha256.Sum256(def)
		labels := u.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[api.LabelCRDChart] = ch.Name()
		u.SetLabels(labels)
		ann := u.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[api.AnnotationCRDChartVersion] = ch.Metadata.Version
		ann[api.AnnotationCRDDigest] = hex.EncodeToString(digest[:])
		u.SetAnnotations(ann)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out, nil
}

// crdHook is the post-renderer's CRDs hook of an install or upgrade: the
// CRD step, run once the chart is rendered, before Helm applies anything.
func (s *step) crdHook(ctx context.Context) func([]*unstructured.Unstructured) error {
	return func(templated []*unstructured.Unstructured) error { return s.applyCRDs(ctx, templated) }
}

// crdStep is the CRD step's view of the chart's CRDs: what it would write,
// from what the cluster holds.
type crdStep struct {
	policy string
	plan   crdPlan
	// templated names the templated CRDs (written as the release's
	// account when the watch impersonates; crds/ ones as the operator).
	templated map[string]bool
}

// planCRDStep admits the templated CRDs (crdtemplates.go), reads what
// the cluster holds of the chart's CRDs and plans what the watch's policy
// writes; create-and-replace's check sees the result of a dry-run apply.
// Nothing is written.
func (s *step) planCRDStep(ctx context.Context, templated []*unstructured.Unstructured) (*crdStep, error) {
	w := s.t.Watch
	cs := &crdStep{policy: w.CRDPolicy(), templated: map[string]bool{}}
	if cs.policy == watches.CRDPolicySkip {
		return cs, nil
	}
	templated, err := s.admitTemplatedCRDs(templated)
	if err != nil {
		return nil, err
	}
	for _, c := range templated {
		cs.templated[c.GetName()] = true
	}
	want, err := chartCRDs(w.Chart, templated)
	if err != nil || len(want) == 0 {
		return cs, err
	}
	have := map[string]*unstructured.Unstructured{}
	for _, c := range want {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crdGVK)
		switch err := s.e.live.Get(ctx, client.ObjectKey{Name: c.GetName()}, u); {
		case apierrors.IsNotFound(err):
			have[c.GetName()] = nil
		case err != nil:
			return nil, fmt.Errorf("reading CRD %s: %w", c.GetName(), err)
		default:
			have[c.GetName()] = u
		}
	}
	cs.plan, err = planCRDs(cs.policy, want, have, func(c *unstructured.Unstructured) (*unstructured.Unstructured, error) {
		return s.applyCRD(ctx, c, cs.templated[c.GetName()], true)
	})
	return cs, err
}

// crdWriter is the client that writes a CRD: the release's account for a
// templated one when the watch impersonates, else the operator's.
func (s *step) crdWriter(templated bool) (client.Client, string, error) {
	user := s.user()
	if !templated || user == "" || s.e.impersonate == nil {
		return s.e.live, "", nil
	}
	c, err := s.e.impersonate.clientFor(user)
	return c, user, err
}

// applyCRD applies the chart's fields of a CRD (server-side apply as
// chartkeeper, forcing ownership of those fields only: what others set, a
// conversion webhook's injected caBundle or their labels, stays) and
// returns the CRD as the API server then holds it; dryRun writes nothing.
func (s *step) applyCRD(ctx context.Context, c *unstructured.Unstructured, templated, dryRun bool) (*unstructured.Unstructured, error) {
	wr, user, err := s.crdWriter(templated)
	if err != nil {
		return nil, err
	}
	u := applyObject(c)
	opts := []client.ApplyOption{client.FieldOwner(api.FieldManager), client.ForceOwnership}
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	if err := wr.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), opts...); err != nil {
		what := "applying"
		if dryRun {
			what = "dry-run applying"
		}
		return nil, explain(fmt.Errorf("%s CRD %s: %w", what, c.GetName(), err), user)
	}
	return u, nil
}

// applyObject is the chart's CRD as an apply configuration: what the chart
// sets, nothing the server keeps (resourceVersion, status).
func applyObject(c *unstructured.Unstructured) *unstructured.Unstructured {
	u := c.DeepCopy()
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "metadata", "uid")
	unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
	return u
}

// applyCRDs applies the chart's CRDs under the watch's policy, waits
// until the ones it wrote are Established (bounded by the watch's
// timeout), and lets the REST mapper see them. An Event CRDsApplied names
// what it wrote.
func (s *step) applyCRDs(ctx context.Context, templated []*unstructured.Unstructured) error {
	w := s.t.Watch
	cs, err := s.planCRDStep(ctx, templated)
	if err != nil {
		return err
	}
	var done, written []string
	for _, c := range cs.plan.create {
		wr, user, err := s.crdWriter(cs.templated[c.GetName()])
		if err != nil {
			return err
		}
		if cs.policy == watches.CRDPolicyCreateAndReplace {
			// Applied from the start: later applies own the same fields.
			if _, err := s.applyCRD(ctx, c, cs.templated[c.GetName()], false); err != nil {
				return err
			}
		} else if err := wr.Create(ctx, applyObject(c), client.FieldOwner(api.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
			return explain(fmt.Errorf("creating CRD %s: %w", c.GetName(), err), user)
		}
		done, written = append(done, "created "+c.GetName()), append(written, c.GetName())
	}
	for _, r := range cs.plan.replace {
		if _, err := s.applyCRD(ctx, r.want, cs.templated[r.want.GetName()], false); err != nil {
			return err
		}
		done, written = append(done, "replaced "+r.want.GetName()), append(written, r.want.GetName())
	}
	if len(done) == 0 {
		return nil
	}
	for _, name := range written {
		if err := s.waitEstablished(ctx, name); err != nil {
			return err
		}
	}
	if r, ok := s.e.helm.Mapper().(meta.ResettableRESTMapper); ok {
		r.Reset() // kinds of a new CRD map from now on
	}
	s.eventf(false, api.ReasonCRDsApplied, "chart %s-%s, crds policy %s: %s", w.Chart.Name(), w.Chart.Metadata.Version, cs.policy, strings.Join(done, ", "))
	return nil
}

// waitEstablished waits until the CRD is Established, bounded by the
// watch's timeout (and ctx).
func (s *step) waitEstablished(ctx context.Context, name string) error {
	if t := s.t.Watch.Policy.Timeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	for {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crdGVK)
		if err := s.e.live.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return fmt.Errorf("reading CRD %s: %w", name, err)
		}
		if established(u) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("CRD %s is not Established: %w", name, ctx.Err())
		case <-time.After(crdPoll):
		}
	}
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == string(apiextv1.Established) && m["status"] == string(apiextv1.ConditionTrue) {
			return true
		}
	}
	return false
}

// crdRefused records an install or upgrade the CRD step refused (a
// *CRDRefusedError or *CRDTemplateError: nothing was written, Helm applied
// nothing): terminal until the desired digest changes or a reconcile is
// requested, with an Event and Released False CRDUpgradeRefused or
// CRDTemplateRefused (Stalled says the same). It reports whether it was
// one.
func (s *step) crdRefused(a action, out outcome, err error) bool {
	reason, ok := crdRefusal(err)
	if out.changed() || !ok {
		return false
	}
	msg := err.Error()
	s.st.TerminalError, s.st.TerminalDigest, s.st.TerminalReason = s.failureMessage(msg), s.d.digest, string(reason)
	why := fmt.Sprintf("%s refused: %s", a.kind(), msg)
	s.eventf(true, reason, "%s", why)
	s.setCondition(api.ConditionReleased, metav1.ConditionFalse, reason, why)
	s.attempted(a, out, api.AttemptFailed, reason, why)
	return true
}

// terminalReason is the reason of the status's terminal error when it is
// not the chart's (ChartError): "", CRDUpgradeRefused or
// CRDTemplateRefused.
func terminalReason(st *api.Status) api.Reason {
	for _, r := range []api.Reason{api.ReasonCRDUpgradeRefused, api.ReasonCRDTemplateRefused} {
		if st.TerminalReason == string(r) {
			return r
		}
	}
	return ""
}
