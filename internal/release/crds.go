package release

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
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

// crdPlan is what the CRD step writes.
type crdPlan struct {
	create, replace []*unstructured.Unstructured
}

// planCRDs decides, for the chart's CRDs (want) and what the cluster holds
// of them (have: nil for a missing one), what to create and replace under
// policy: skip touches nothing; create creates the missing ones;
// create-and-replace also replaces the existing ones, unless one breaks
// what the cluster holds: then nothing is written (*CRDRefusedError).
func planCRDs(policy string, want []*unstructured.Unstructured, have map[string]*unstructured.Unstructured) (crdPlan, error) {
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
			o, n := &apiextv1.CustomResourceDefinition{}, &apiextv1.CustomResourceDefinition{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(old.Object, o); err != nil {
				return crdPlan{}, fmt.Errorf("reading CRD %s: %w", old.GetName(), err)
			}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(w.Object, n); err != nil {
				return crdPlan{}, &ChartError{Err: fmt.Errorf("CRD %s of the chart: %w", w.GetName(), err)}
			}
			if changes := crdschema.BreakingCRD(o, n); len(changes) > 0 {
				return crdPlan{}, &CRDRefusedError{CRD: w.GetName(), Changes: changes}
			}
			r := w.DeepCopy()
			r.SetResourceVersion(old.GetResourceVersion())
			p.replace = append(p.replace, r)
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

// applyCRDs applies the chart's CRDs under the watch's policy, waits
// until the ones it wrote are Established (bounded by the watch's
// timeout), and lets the REST mapper see them. An Event CRDsApplied names
// what it wrote.
func (s *step) applyCRDs(ctx context.Context, templated []*unstructured.Unstructured) error {
	w := s.t.Watch
	policy := w.CRDPolicy()
	if policy == watches.CRDPolicySkip {
		return nil
	}
	want, err := chartCRDs(w.Chart, templated)
	if err != nil || len(want) == 0 {
		return err
	}
	have := map[string]*unstructured.Unstructured{}
	for _, c := range want {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(crdGVK)
		switch err := s.e.live.Get(ctx, client.ObjectKey{Name: c.GetName()}, u); {
		case apierrors.IsNotFound(err):
			have[c.GetName()] = nil
		case err != nil:
			return fmt.Errorf("reading CRD %s: %w", c.GetName(), err)
		default:
			have[c.GetName()] = u
		}
	}
	p, err := planCRDs(policy, want, have)
	if err != nil {
		return err
	}
	var done []string
	for _, c := range p.create {
		if err := s.e.live.Create(ctx, c.DeepCopy(), client.FieldOwner(api.FieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating CRD %s: %w", c.GetName(), err)
		}
		done = append(done, "created "+c.GetName())
	}
	for _, c := range p.replace {
		if err := s.e.live.Update(ctx, c.DeepCopy(), client.FieldOwner(api.FieldManager)); err != nil {
			return fmt.Errorf("replacing CRD %s: %w", c.GetName(), err)
		}
		done = append(done, "replaced "+c.GetName())
	}
	if len(done) == 0 {
		return nil
	}
	for _, c := range append(p.create, p.replace...) {
		if err := s.waitEstablished(ctx, c.GetName()); err != nil {
			return err
		}
	}
	if r, ok := s.e.helm.Mapper().(meta.ResettableRESTMapper); ok {
		r.Reset() // kinds of a new CRD map from now on
	}
	s.eventf(false, api.ReasonCRDsApplied, "chart %s-%s, crds policy %s: %s", w.Chart.Name(), w.Chart.Metadata.Version, policy, strings.Join(done, ", "))
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
// *CRDRefusedError: nothing was written, Helm applied nothing): terminal
// until the desired digest changes or a reconcile is requested, with an
// Event and Released False CRDUpgradeRefused (Stalled says the same). It
// reports whether it was one.
func (s *step) crdRefused(a action, out outcome, err error) bool {
	var re *CRDRefusedError
	if out.changed() || !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	s.st.TerminalError, s.st.TerminalDigest, s.st.TerminalReason = s.failureMessage(msg), s.d.digest, string(api.ReasonCRDUpgradeRefused)
	why := fmt.Sprintf("%s refused: %s", a.kind(), msg)
	s.eventf(true, api.ReasonCRDUpgradeRefused, "%s", why)
	s.setCondition(api.ConditionReleased, metav1.ConditionFalse, api.ReasonCRDUpgradeRefused, why)
	s.attempted(a, out, api.AttemptFailed, api.ReasonCRDUpgradeRefused, why)
	return true
}

// terminalReason is the reason of the status's terminal error when it is
// not the chart's (ChartError): "" or CRDUpgradeRefused.
func terminalReason(st *api.Status) api.Reason {
	if st.TerminalReason == string(api.ReasonCRDUpgradeRefused) {
		return api.ReasonCRDUpgradeRefused
	}
	return ""
}
