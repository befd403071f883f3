package leakcheck

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// helmReleaseType is the type of the Secrets Helm stores releases in:
// they hold every value of a release, secret or not, and are where
// values are meant to be.
const helmReleaseType corev1.SecretType = "helm.sh/release.v1"

// lastApplied is kubectl's copy of what a person applied: the person's
// writing, not the operator's.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// AddSecret adds every key of a Secret's data, labelled "Secret
// <namespace>/<name> key <key>".
func (s *Set) AddSecret(sec *corev1.Secret) {
	keys := make([]string, 0, len(sec.Data))
	for k := range sec.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s.Add(fmt.Sprintf("Secret %s/%s key %s", sec.Namespace, sec.Name, k), string(sec.Data[k]))
	}
}

// FromSecrets adds the data of every Secret in the namespaces but Helm's
// release records (type helm.sh/release.v1) and ServiceAccount tokens:
// the credentials charts and hooks generated, and the Secrets values came
// from. Call it while the Secrets are still there (before deleting the
// resources that own them).
func (s *Set) FromSecrets(ctx context.Context, cs kubernetes.Interface, namespaces ...string) error {
	for _, ns := range namespaces {
		list, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("leakcheck: listing the Secrets of %s: %w", ns, err)
		}
		for i := range list.Items {
			if t := list.Items[i].Type; t == helmReleaseType || t == corev1.SecretTypeServiceAccountToken {
				continue
			}
			s.AddSecret(&list.Items[i])
		}
	}
	return nil
}

// ScanEvents looks for the values in every Event of the namespaces: its
// reason, message (events.k8s.io's note), action and annotations.
func (s *Set) ScanEvents(ctx context.Context, cs kubernetes.Interface, namespaces ...string) ([]Leak, error) {
	var out []Leak
	for _, ns := range namespaces {
		list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return out, fmt.Errorf("leakcheck: listing the Events of %s: %w", ns, err)
		}
		for _, e := range list.Items {
			out = append(out, s.ScanEvent(&e)...)
		}
	}
	return out, nil
}

// ScanEvent looks for the values in one Event.
func (s *Set) ScanEvent(e *corev1.Event) []Leak {
	where := fmt.Sprintf("Event %s/%s (%s %s, reason %s)", e.Namespace, e.Name, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason)
	fields := map[string]string{"reason": e.Reason, "message": e.Message, "action": e.Action}
	for k, v := range e.Annotations {
		fields["annotation "+k] = v
	}
	return s.scanFields(where, fields)
}

// ScanObject looks for the values in a custom resource's status and its
// annotations (but kubectl's last-applied-configuration, the person's own
// copy of the spec). Where says "<Kind> <namespace>/<name> <path>".
func (s *Set) ScanObject(u *unstructured.Unstructured) []Leak {
	fields := map[string]string{}
	flatten("status", u.Object["status"], fields)
	for k, v := range u.GetAnnotations() {
		if k != lastApplied {
			fields["metadata.annotations["+k+"]"] = v
		}
	}
	return s.scanFields(fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName()), fields)
}

// ScanResources looks for the values in the status and annotations of
// every resource of gvr in the namespaces.
func (s *Set) ScanResources(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, namespaces ...string) ([]Leak, error) {
	var out []Leak
	for _, ns := range namespaces {
		list, err := dyn.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return out, fmt.Errorf("leakcheck: listing %s in %s: %w", gvr.Resource, ns, err)
		}
		for i := range list.Items {
			out = append(out, s.ScanObject(&list.Items[i])...)
		}
	}
	return out, nil
}

// Where says what Scan looks through.
type Where struct {
	// LogFiles are operator log files.
	LogFiles []string
	// Texts are captured outputs, by name ("operator log").
	Texts map[string]string
	// Namespaces: their Events, and the resources of Resources in them.
	Namespaces []string
	// Resources are the custom resources' kinds.
	Resources []schema.GroupVersionResource
}

// Scan looks through everything w names. dyn may be nil when w names no
// Resources.
func (s *Set) Scan(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, w Where) ([]Leak, error) {
	var out []Leak
	for _, f := range w.LogFiles {
		leaks, err := s.ScanFile(f)
		if err != nil {
			return out, err
		}
		out = append(out, leaks...)
	}
	names := make([]string, 0, len(w.Texts))
	for n := range w.Texts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, s.ScanText(n, w.Texts[n])...)
	}
	leaks, err := s.ScanEvents(ctx, cs, w.Namespaces...)
	out = append(out, leaks...)
	if err != nil {
		return out, err
	}
	for _, gvr := range w.Resources {
		leaks, err := s.ScanResources(ctx, dyn, gvr, w.Namespaces...)
		out = append(out, leaks...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// Check is the whole check in one call, for a harness: it looks for the
// data of every Secret of w.Namespaces (FromSecrets: the credentials
// generated there and the Secrets values came from) in everything w names,
// and returns the leaks and how many values it looked for (0: the scan
// proves nothing).
func Check(ctx context.Context, cs kubernetes.Interface, dyn dynamic.Interface, w Where) ([]Leak, int, error) {
	s := New()
	if err := s.FromSecrets(ctx, cs, w.Namespaces...); err != nil {
		return nil, 0, err
	}
	leaks, err := s.Scan(ctx, cs, dyn, w)
	return leaks, s.Len(), err
}

// scanFields scans each field (by name, in order) as one text.
func (s *Set) scanFields(where string, fields map[string]string) []Leak {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []Leak
	for _, n := range names {
		out = append(out, s.scan(where+" "+n, fields[n], false)...)
	}
	return out
}

// flatten writes every string under v into fields by its path
// (status.conditions[1].message), and every map key; other scalars are
// written as text.
func flatten(path string, v any, fields map[string]string) {
	switch v := v.(type) {
	case nil:
	case map[string]any:
		for k, e := range v {
			key := path + "." + k
			if strings.ContainsAny(k, ".[]") {
				key = path + "[" + k + "]"
			}
			fields[key+" (the key)"] = k // a map keyed by a secret leaks it too
			flatten(key, e, fields)
		}
	case []any:
		for i, e := range v {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, fields)
		}
	case string:
		fields[path] = v
	default:
		fields[path] = fmt.Sprint(v)
	}
}
