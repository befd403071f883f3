package release

import (
	"context"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// Spec to values: what a custom resource asks for, computed once per step
// (desire) from its spec, the kind's Translator hooks, valuesFrom
// (valuesfrom.go reads them) and the watch's overrides (compute).

// desired is what a custom resource asks for.
type desired struct {
	ref watches.ReleaseRef
	// account is the ServiceAccount the release runs as (zero: the
	// operator's own rights; identity.go).
	account watches.ServiceAccountRef
	values  chartutil.Values
	digest  string
	err     error // the values cannot be computed
	// redact hides the values the chart's schema marks secret (in the
	// spec and in the computed values) from every message: conditions,
	// events, logs, hook failures. Built once per step.
	redact *values.Redactor
	// secrets are the strings redact hides.
	secrets []string
}

// desire computes the desired release: name, values (valuesFrom, under the
// spec translated by the kind's Translator hooks, with overrides on top)
// and their digest. A hook failure is returned apart: it is retried, not a
// verdict on the values.
func (s *step) desire(ctx context.Context) (hookErr error) {
	d := &s.d
	t, obj := s.t, s.obj
	d.ref, d.err = t.Watch.Release(obj.GetName(), obj.GetNamespace())
	if d.err != nil {
		return nil
	}
	if d.err = s.resolveAccount(); d.err != nil {
		return nil
	}
	spec, err := values.FromSpec(obj)
	if err != nil {
		d.err = err
		return nil
	}
	secrets := append(values.SecretStrings(t.Watch.Chart, spec), s.from.secrets...)
	d.redact = values.NewRedactor(secrets)
	defer func() {
		if d.values != nil { // a translator or override may have added secrets
			if more := values.SecretStrings(t.Watch.Chart, d.values); len(more) > 0 {
				secrets = append(secrets, more...)
				d.redact = values.NewRedactor(secrets)
			}
		}
		d.secrets = secrets
		d.err = d.redact.Error(d.err)
		hookErr = d.redact.Error(hookErr)
	}()
	if s.from.err != nil {
		d.err = s.from.err
		return nil
	}
	if obj.GetDeletionTimestamp() == nil { // a resource being deleted needs no new values
		if len(s.chain) > 0 {
			// The user's spec is checked against the chart's schema before
			// any hook acts on it: a hook must not change anything outside
			// Helm (etcd membership, say) for a spec the chart refuses.
			in, err := s.compute(spec)
			if err == nil {
				err = values.Validate(t.Watch.Chart, in)
			}
			if err != nil {
				d.err = err
				return nil
			}
		}
		if spec, err = s.chain.Translate(ctx, s.hookRequest(), spec); err != nil {
			return err
		}
	}
	if d.values, d.err = s.compute(spec); d.err != nil {
		return nil
	}
	d.digest, d.err = values.Digest(t.ChartDigest, d.values)
	return nil
}

// compute merges the valuesFrom values under spec and sets the watch's
// overrideValues on top: valuesFrom in order, then the spec, then the
// overrides; the last wins.
func (s *step) compute(spec chartutil.Values) (chartutil.Values, error) {
	if s.from.values != nil {
		spec = values.Merge(s.from.values, spec)
	}
	return values.ComputeAs(spec, s.t.Watch.OverrideValues, s.t.Watch.OverrideValuesAsStrings)
}
