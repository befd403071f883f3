package release

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/metrics"
	"github.com/chartkeeper/chartkeeper/internal/values"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// valuesFrom: the values a custom resource takes from the ConfigMaps and
// Secrets its watch names (docs/values-from.md). Each step reads them
// (through the engine's ValuesSources, which watches exactly those
// objects), merges them in the listed order under the resource's spec,
// and hides every string a Secret gave from its messages. A required
// object that is missing holds the release back (StateWaiting, reason
// ValuesSourceMissing) until it appears; a deleted resource needs none.

// phaseValuesFrom names the reading of valuesFrom in status.backoffOf.
const phaseValuesFrom = "ValuesFrom"

// ValuesSources reads the ConfigMaps and Secrets of watches' valuesFrom,
// and reconciles the resources that take values from them when they
// change (internal/controller watches exactly those objects).
type ValuesSources interface {
	// Use says which objects resource takes values from now, replacing
	// what it used before (none: it takes none any more).
	Use(resource Resource, objs []watches.SourceObject)
	// Read returns obj's data (a ConfigMap's data and binaryData, a
	// Secret's data); found is false when obj does not exist.
	Read(ctx context.Context, obj watches.SourceObject) (data map[string][]byte, found bool, err error)
}

// Resource names a custom resource, whatever its kind.
type Resource struct {
	GroupKind schema.GroupKind
	types.NamespacedName
}

// resourceOf names obj.
func resourceOf(obj *unstructured.Unstructured) Resource {
	return Resource{GroupKind: obj.GroupVersionKind().GroupKind(), NamespacedName: types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}
}

// WithValuesSources sets where valuesFrom is read (default: the API
// server, on every step, with nothing watched).
func WithValuesSources(v ValuesSources) Option { return func(e *Engine) { e.sources = v } }

// ForgetResource says that a custom resource is gone (deleted, or no
// longer this controller's): it takes values from nothing any more, is
// not being remediated, and has no state in chartkeeper_releases. What is
// remembered of its release goes with Forget.
func (e *Engine) ForgetResource(r Resource) {
	e.sources.Use(r, nil)
	e.remediating.drop(r)
	metrics.States.Delete(r.key())
}

// key names r in chartkeeper_releases' bookkeeping.
func (r Resource) key() string { return r.GroupKind.String() + "/" + r.Namespace + "/" + r.Name }

// liveSources reads valuesFrom objects from the API server at each step.
type liveSources struct{ c client.Reader }

func (liveSources) Use(Resource, []watches.SourceObject) {}

func (l liveSources) Read(ctx context.Context, obj watches.SourceObject) (map[string][]byte, bool, error) {
	key := client.ObjectKey{Namespace: obj.Namespace, Name: obj.Name}
	if obj.Kind == watches.SourceSecret {
		s := &corev1.Secret{}
		if err := l.c.Get(ctx, key, s); err != nil {
			return nil, false, client.IgnoreNotFound(err)
		}
		return s.Data, true, nil
	}
	cm := &corev1.ConfigMap{}
	if err := l.c.Get(ctx, key, cm); err != nil {
		return nil, false, client.IgnoreNotFound(err)
	}
	return ConfigMapData(cm), true, nil
}

// ConfigMapData is a ConfigMap's data and binaryData as one map (a key is
// in one or the other).
func ConfigMapData(cm *corev1.ConfigMap) map[string][]byte {
	out := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
	for k, v := range cm.BinaryData {
		out[k] = v
	}
	for k, v := range cm.Data {
		out[k] = []byte(v)
	}
	return out
}

// ValuesSourceError says why the values of a resource's valuesFrom cannot
// be had yet: required objects or keys are missing (ValuesSourceMissing),
// or the operator may not read one (Forbidden). Both heal without a change
// of spec. It names kinds, namespaces, names and keys, never data.
type ValuesSourceError struct {
	Reason api.Reason
	// Problems says, per object, what is wrong.
	Problems []string
	// Err is the read error (Forbidden), if any.
	Err error
}

func (e *ValuesSourceError) Error() string {
	return "valuesFrom: " + strings.Join(e.Problems, "; ")
}

func (e *ValuesSourceError) Unwrap() error { return e.Err }

// fromSources is what a resource takes from its watch's valuesFrom.
type fromSources struct {
	// values is every entry merged in order (nil: the watch has none).
	values chartutil.Values
	// secrets are the strings Secrets gave: hidden from every message.
	secrets []string
	// secretShapes are where Secrets' values go: each Secret entry's
	// content, or the path of its targetPath (see secretsIn).
	secretShapes []chartutil.Values
	// err: the values cannot be had (a *ValuesSourceError, or an entry
	// whose content is not values).
	err error
}

// readValuesFrom fills s.from from the watch's valuesFrom, and tells the
// engine's sources which objects the resource uses. For a resource being
// deleted only the secrets are read (secretsOnly). The error is a read
// error worth retrying as it is (the API server, a watch not synced yet).
func (s *step) readValuesFrom(ctx context.Context) error {
	w, obj := s.t.Watch, s.obj
	if len(w.ValuesFrom) == 0 {
		return nil
	}
	if obj.GetDeletionTimestamp() != nil {
		s.secretsOnly(ctx)
		return nil
	}
	ref, err := w.Release(obj.GetName(), obj.GetNamespace())
	if err != nil {
		return nil // desire reports it
	}
	srcs, err := w.ValuesSources(obj.GetName(), obj.GetNamespace(), ref.Namespace)
	if err != nil {
		s.from.err = err
		return nil
	}
	objs := make([]watches.SourceObject, 0, len(srcs))
	for _, src := range srcs {
		objs = append(objs, src.Object)
	}
	s.e.sources.Use(resourceOf(obj), objs)

	s.from.values = chartutil.Values{}
	var missing []string
	for _, src := range srcs {
		data, found, err := s.e.sources.Read(ctx, src.Object)
		switch {
		case apierrors.IsForbidden(err):
			s.from.err = &ValuesSourceError{Reason: api.ReasonForbidden, Err: err,
				Problems: []string{fmt.Sprintf("%s cannot be read: %v", src.Object, err)}}
			return nil
		case err != nil:
			return fmt.Errorf("valuesFrom: reading %s: %w", src.Object, err)
		}
		raw, ok := data[src.ValuesKey]
		switch {
		case ok:
		case src.Optional:
			continue
		case !found:
			missing = append(missing, fmt.Sprintf("%s not found (key %q)", src.Object, src.ValuesKey))
			continue
		default:
			missing = append(missing, fmt.Sprintf("%s has no key %q", src.Object, src.ValuesKey))
			continue
		}
		if err := s.from.add(src, raw); err != nil {
			s.from.err = err
			return nil
		}
	}
	if len(missing) > 0 {
		s.from.err = &ValuesSourceError{Reason: api.ReasonValuesSourceMissing, Problems: missing}
	}
	return nil
}

// secretsOnly keeps, for a resource being deleted, the strings its
// valuesFrom Secrets give (s.from.secrets), so that the uninstall's
// messages and Helm's log lines are redacted as the release's were: read
// through the engine's sources (the controller's: from the watches its
// earlier steps started, held until it is gone, with no request and no
// new watch); whatever cannot be read so is
// left out, and nothing else of s.from is set.
func (s *step) secretsOnly(ctx context.Context) {
	w, obj := s.t.Watch, s.obj
	ref, err := w.Release(obj.GetName(), obj.GetNamespace())
	if err != nil {
		return
	}
	srcs, err := w.ValuesSources(obj.GetName(), obj.GetNamespace(), ref.Namespace)
	if err != nil {
		return
	}
	read := fromSources{values: chartutil.Values{}}
	for _, src := range srcs {
		if src.Object.Kind != watches.SourceSecret {
			continue
		}
		if data, _, err := s.e.sources.Read(ctx, src.Object); err == nil {
			if raw, ok := data[src.ValuesKey]; ok {
				_ = read.add(src, raw) // what it could not merge is not needed
			}
		}
	}
	s.from.secrets = read.secrets
}

// add merges one entry's content over the entries before it.
func (f *fromSources) add(src watches.ValuesSource, raw []byte) error {
	secret := src.Object.Kind == watches.SourceSecret
	if src.TargetPath != "" {
		if secret { // before SetString: its error may quote the value
			f.secrets = append(f.secrets, string(raw))
		}
		if err := values.SetString(f.values, src.TargetPath, string(raw)); err != nil {
			return fmt.Errorf("valuesFrom: %s key %q at targetPath %s: %w", src.Object, src.ValuesKey, src.TargetPath, err)
		}
		if secret {
			shape := chartutil.Values{}
			_ = values.SetString(shape, src.TargetPath, "") // the same path: it parsed above
			f.secretShapes = append(f.secretShapes, shape)
		}
		return nil
	}
	doc, err := values.ParseDocument(raw)
	if err != nil {
		why := err.Error()
		if secret { // a parser's message may quote the document
			why = "not valid YAML"
			if l := yamlLine.FindString(err.Error()); l != "" {
				why += " (" + l + ")"
			}
		}
		return fmt.Errorf("valuesFrom: %s key %q does not hold a YAML mapping of values: %s", src.Object, src.ValuesKey, why)
	}
	if secret {
		f.secrets = append(f.secrets, values.Leaves(map[string]any(doc))...)
		f.secretShapes = append(f.secretShapes, doc)
	}
	f.values = values.Merge(f.values, doc)
	return nil
}

// secretsIn returns the strings of vals (the values of an earlier
// revision, say) where the Secrets of valuesFrom put theirs now: what a
// Secret gave before it changed, which the live objects may still hold.
func (f *fromSources) secretsIn(vals map[string]any) []string {
	var out []string
	for _, shape := range f.secretShapes {
		out = append(out, valuesAt(map[string]any(shape), vals)...)
	}
	return out
}

// valuesAt returns the leaves of vals found where shape has values.
func valuesAt(shape, vals any) []string {
	if v, ok := vals.(chartutil.Values); ok {
		vals = map[string]any(v)
	}
	if v, ok := shape.(chartutil.Values); ok {
		shape = map[string]any(v)
	}
	switch sh := shape.(type) {
	case nil: // an element a path skipped ("hosts[1]" has none at 0)
		return nil
	case map[string]any:
		m, ok := vals.(map[string]any)
		if !ok {
			return nil
		}
		var out []string
		for k, sub := range sh {
			if v, ok := m[k]; ok {
				out = append(out, valuesAt(sub, v)...)
			}
		}
		return out
	case []any:
		l, ok := vals.([]any)
		if !ok {
			return nil
		}
		var out []string
		for i, sub := range sh {
			if i < len(l) {
				out = append(out, valuesAt(sub, l[i])...)
			}
		}
		return out
	}
	return values.Leaves(vals)
}

// yamlLine finds the line a YAML parser names in its message.
var yamlLine = regexp.MustCompile(`line \d+`)

// waitForValues records a step that found the valuesFrom of the resource
// missing or unreadable (StateWaiting): backed off like a failure, with an
// Event, unless it is already waiting out its backoff. The object is
// watched: its creation reconciles at once; the backoff is the fallback.
// It returns how long until the next look.
func (s *step) waitForValues() time.Duration {
	st, now := s.st, s.e.clock.Now()
	if st.BackoffOf == phaseValuesFrom && st.BackoffReason == string(s.dec.Reason) && st.NextAttemptTime != nil && now.Before(st.NextAttemptTime.Time) {
		return st.NextAttemptTime.Sub(now)
	}
	msg := s.d.redact.Redact(s.dec.Message)
	left := s.backOff(phaseValuesFrom, msg, 0)
	st.BackoffReason = string(s.dec.Reason)
	s.eventf(true, s.dec.Reason, "%s; looked for again in %s, or as soon as it changes", msg, left.Round(time.Second))
	return left
}
