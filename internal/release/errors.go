package release

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// Sentinel errors of a step. The controller maps them in one place:
// ErrCacheStale and transient errors requeue, a *ChartError is terminal
// until the resource or chart changes.
var (
	// ErrCacheStale: the cache does not yet show the result of our last
	// action; the step is retried shortly without acting.
	ErrCacheStale = errors.New("cache does not show our last action yet")
)

// CacheStaleRequeue is how soon a step that returned ErrCacheStale runs again.
const CacheStaleRequeue = 250 * time.Millisecond

// ChartError is a failure the chart causes for these values (schema,
// template, rendered YAML) before Helm stored anything: retrying the same
// spec cannot help.
type ChartError struct {
	Err error
	// Reason is why it is terminal when the values are not the cause
	// (CRDUpgradeRefused); empty: the chart rejects the values.
	Reason api.Reason
}

func (e *ChartError) Error() string { return e.Err.Error() }
func (e *ChartError) Unwrap() error { return e.Err }

// IsTransient reports whether err is worth retrying as it is: API server
// overload or unavailability, network trouble, timeouts, unknown kinds
// (their CRD may be installed any moment).
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	switch {
	case errors.Is(err, ErrCacheStale),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.ECONNRESET),
		errors.As(err, &ne),
		meta.IsNoMatchError(err),
		apierrors.IsServerTimeout(err),
		apierrors.IsTimeout(err),
		apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err),
		apierrors.IsInternalError(err),
		apierrors.IsUnexpectedServerError(err),
		apierrors.IsConflict(err):
		return true
	}
	return false
}

// dependencyReasons are the reasons of dependencyReason.
var dependencyReasons = []api.Reason{api.ReasonMissingDependency, api.ReasonForbidden}

// dependencyReason classifies an error of an install or upgrade before
// Helm stored anything: a cause outside the chart and the values, which
// can go away without a change of spec, is MissingDependency (the release
// namespace, the CRD of a kind the chart renders) or Forbidden (RBAC on
// Helm's own reads and writes, say). Anything else, a chart error or a
// scope refusal first, is "" (terminal for the digest).
func dependencyReason(err error) api.Reason {
	var ce *ChartError
	var se *ScopeError
	if err == nil || errors.As(err, &ce) || errors.As(err, &se) {
		return ""
	}
	msg := err.Error()
	switch {
	case meta.IsNoMatchError(err), apierrors.IsNotFound(err),
		// Helm flattens some errors into text: the kubectl builder's hint,
		// and a namespace the API server did not find.
		strings.Contains(msg, "ensure CRDs are installed first"),
		strings.Contains(msg, "no matches for kind"),
		namespaceNotFound.MatchString(msg):
		return api.ReasonMissingDependency
	case apierrors.IsForbidden(err), strings.Contains(msg, " is forbidden: "):
		return api.ReasonForbidden
	}
	return ""
}

// namespaceNotFound matches the API server's message for a missing namespace.
var namespaceNotFound = regexp.MustCompile(`namespaces? "[^"]+" not found`)
