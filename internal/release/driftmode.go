package release

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// driftModeOf returns a resource's drift mode: its chartkeeper.dev/drift
// annotation, else the watch's. An invalid annotation is an error, and the
// watch's mode applies.
func driftModeOf(obj *unstructured.Unstructured, p watches.Policy) (watches.DriftMode, error) {
	v, ok := obj.GetAnnotations()[api.AnnotationDrift]
	if !ok {
		return p.DriftMode, nil
	}
	m, err := watches.ParseDriftMode(v)
	if err != nil {
		return p.DriftMode, fmt.Errorf("annotation %s: %w; the watch's mode %s applies", api.AnnotationDrift, err, p.DriftMode)
	}
	return m, nil
}

// driftMode is the mode Decide follows: the observed one, else the watch's.
func driftMode(o Observation, p policyOf) watches.DriftMode {
	if o.DriftMode != "" {
		return o.DriftMode
	}
	return p.DriftMode
}

// setDrifted writes the Drifted condition: True (DriftDetected, naming the
// objects and fields) while drift was found and not corrected by this
// step, in warn mode or when a correction failed; Unknown
// (InvalidDriftMode) when the annotation is invalid and nothing drifted;
// absent otherwise.
func (s *step) setDrifted(res Result) {
	mode, modeErr := driftModeOf(s.obj, s.t.Watch.Policy)
	corrected := res.Ran == ActionCorrectDrift && res.ActionErr == nil
	switch {
	case len(s.o.Drift) > 0 && !corrected && mode != watches.DriftDisabled:
		msg := "released objects differ from the release: " + driftList(s.o.Drift, maxDriftObjects)
		if mode == watches.DriftWarn {
			msg += " (drift mode warn: nothing is changed)"
		}
		if modeErr != nil {
			msg += "; " + modeErr.Error()
		}
		s.setCondition(api.ConditionDrifted, metav1.ConditionTrue, api.ReasonDriftDetected, msg)
	case modeErr != nil:
		s.setCondition(api.ConditionDrifted, metav1.ConditionUnknown, api.ReasonInvalidDriftMode, modeErr.Error())
	default:
		s.dropCondition(api.ConditionDrifted)
	}
}

// maxDriftObjects bounds the objects named in the Drifted condition.
const maxDriftObjects = 10

// driftList names drifted objects and their fields, at most n objects.
func driftList(drift []Drift, n int) string {
	names := make([]string, 0, min(len(drift), n)+1)
	for i, d := range drift {
		if i == n {
			names = append(names, fmt.Sprintf("and %d more", len(drift)-n))
			break
		}
		names = append(names, d.String())
	}
	return strings.Join(names, ", ")
}
