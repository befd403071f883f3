package release

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/releaseutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/ownership"
	"github.com/chartkeeper/chartkeeper/internal/values"
)

// A templated CRD is the chart's, not the resource's. Whoever may create a
// resource of the kind chooses its values, and a CRD is cluster-wide: a
// resource in one namespace must neither create a CRD nor change one
// every namespace shares. So a templated CRD passes the watch's scope as
// the cluster-scoped object it is (scope.clusterScoped), and must be the
// one the chart's defaults render (with the watch's overrideValues, the
// resource's release name and namespace, the cluster's capabilities): the
// resource's values may decide whether it is rendered, but neither its
// name nor its content. That is also the set create-api saw, and what the
// generated RBAC names.

// resourcePolicyAnnotation is Helm's; it means nothing on a CRD the CRD
// step applies (no CRD is ever deleted), so it is not compared.
const resourcePolicyAnnotation = "helm.sh/resource-policy"

// CRDTemplateError: a templated CRD the resource's values render is not
// one the chart's defaults render alike. Terminal until the chart or spec
// changes (reason CRDTemplateRefused).
type CRDTemplateError struct {
	CRD string
	// Fields where the resource's rendering differs from the defaults'
	// (JSON pointers); none: the defaults render no such CRD.
	Fields []string
}

func (e *CRDTemplateError) Error() string {
	if len(e.Fields) == 0 {
		return fmt.Sprintf("CRD %s is rendered from the resource's values, not from the chart's defaults: a resource may not create a CRD "+
			"(only the templated CRDs the chart's defaults and the watch's overrideValues render are applied; ship it in crds/ or render it by default)", e.CRD)
	}
	return fmt.Sprintf("CRD %s as the resource's values render it differs from the chart's defaults at %s: a resource's values may not change a CRD "+
		"(the chart's defaults and the watch's overrideValues decide it)", e.CRD, strings.Join(e.Fields, ", "))
}

// capabilitiesSource is what a Helm client offers of the cluster's
// capabilities (helm.Client; a fake renders with Helm's defaults).
type capabilitiesSource interface {
	Capabilities() (*chartutil.Capabilities, error)
}

// admitTemplatedCRDs checks the templated CRDs the resource's values
// render against the watch's scope and against what the chart's defaults
// render, and returns the defaults' definitions of them.
func (s *step) admitTemplatedCRDs(templated []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	if len(templated) == 0 {
		return templated, nil
	}
	admit := admitScope(s.t.Watch.Scope, s.d.ref.Namespace)
	for _, c := range templated {
		if err := admit(ownership.Placement{GVK: c.GroupVersionKind(), Name: c.GetName(), ClusterScoped: true}); err != nil {
			return nil, err
		}
	}
	defaults, err := s.defaultCRDs()
	if err != nil {
		return nil, &ChartError{Err: fmt.Errorf("rendering the chart's templated CRDs with its defaults: %w", err)}
	}
	out := make([]*unstructured.Unstructured, 0, len(templated))
	for _, c := range templated {
		d, ok := defaults[c.GetName()]
		if !ok {
			return nil, &CRDTemplateError{CRD: c.GetName()}
		}
		if fields := crdDifference(c, d); len(fields) > 0 {
			return nil, &CRDTemplateError{CRD: c.GetName(), Fields: fields}
		}
		out = append(out, d.DeepCopy())
	}
	return out, nil
}

// defaultCRDs renders the watch's chart with its defaults (and the
// watch's overrideValues) as the step's release, and returns the
// templated CRDs (hooks left out, as the post-renderer never sees them)
// by name.
func (s *step) defaultCRDs() (map[string]*unstructured.Unstructured, error) {
	w := s.t.Watch
	vals, err := values.ComputeAs(chartutil.Values{}, w.OverrideValues, w.OverrideValuesAsStrings)
	if err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities
	if cs, ok := s.e.helm.(capabilitiesSource); ok {
		if caps, err = cs.Capabilities(); err != nil {
			return nil, err
		}
	}
	ch := chartTree(w.Chart) // dependencies are pruned per values: not the watch's chart
	if err := chartutil.ProcessDependenciesWithMerge(ch, vals); err != nil {
		return nil, err
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: s.d.ref.Name, Namespace: s.d.ref.Namespace, Revision: 1, IsInstall: true}, caps)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, err
	}
	out := map[string]*unstructured.Unstructured{}
	for file, text := range files {
		if strings.HasSuffix(file, "NOTES.txt") {
			continue
		}
		for _, doc := range releaseutil.SplitManifests(text) {
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
			u := &unstructured.Unstructured{Object: obj}
			if len(obj) == 0 || u.GroupVersionKind() != crdGVK || u.GetAnnotations()["helm.sh/hook"] != "" {
				continue
			}
			out[u.GetName()] = u
		}
	}
	return out, nil
}

// chartTree copies ch and its subcharts (their files and metadata
// shared), so that processing its dependencies leaves ch as it is.
func chartTree(ch *chart.Chart) *chart.Chart {
	c := *ch
	deps := make([]*chart.Chart, 0, len(ch.Dependencies()))
	for _, d := range ch.Dependencies() {
		deps = append(deps, chartTree(d))
	}
	c.SetDependencies(deps...)
	return &c
}

// crdDifference lists where the resource's rendering of a CRD differs
// from the defaults' (JSON pointers, sorted; at most a few), Helm's
// resource-policy annotation left out.
func crdDifference(got, def *unstructured.Unstructured) []string {
	a, b := crdComparable(got), crdComparable(def)
	seen := map[string]bool{}
	var out []string
	for _, d := range append(diffFields(a, b), diffFields(b, a)...) {
		if !seen[d.Path] {
			seen[d.Path] = true
			out = append(out, d.Path)
		}
	}
	sort.Strings(out)
	if len(out) > 5 {
		out = append(out[:5], fmt.Sprintf("(%d more)", len(out)-5))
	}
	return out
}

// crdComparable is u's object as JSON reads it back (one number type), less
// the resource-policy annotation.
func crdComparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	ann := c.GetAnnotations()
	delete(ann, resourcePolicyAnnotation)
	if len(ann) == 0 {
		ann = nil
	}
	c.SetAnnotations(ann)
	b, err := json.Marshal(c.Object)
	if err != nil {
		return c.Object
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return c.Object
	}
	return out
}

// crdRefusal is the reason of a refused CRD step's error: CRDUpgradeRefused
// or CRDTemplateRefused ("" for another error).
func crdRefusal(err error) (api.Reason, bool) {
	var re *CRDRefusedError
	var te *CRDTemplateError
	switch {
	case errors.As(err, &re):
		return api.ReasonCRDUpgradeRefused, true
	case errors.As(err, &te):
		return api.ReasonCRDTemplateRefused, true
	}
	return "", false
}
