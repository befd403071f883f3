package hooks

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"helm.sh/helm/v3/pkg/chartutil"
	helmrelease "helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultTimeout bounds a hook call that sets no Timeout.
const DefaultTimeout = 30 * time.Second

// Request is what every hook call gets.
type Request struct {
	// Object is the custom resource. Changes to it are not saved.
	Object *unstructured.Unstructured
	// Client reads and writes the cluster (uncached).
	Client client.Client
	// ReleaseName and ReleaseNamespace name the Helm release.
	ReleaseName, ReleaseNamespace string
	// Now is the engine's clock: tests move it.
	Now func() time.Time
	// Log is the hook's logger.
	Log logr.Logger
	// AppStatus is the resource's status.app, for the hook to fill; it is
	// saved with the status.
	AppStatus map[string]any
}

// Release is what a PostRelease hook learns of the deployed release.
type Release struct {
	Name, Namespace string
	Revision        int
	// Ready: every released object is Ready (the release has rolled).
	Ready bool
	// Objects are the released objects' kinds, namespaces and names.
	Objects []ObjectRef
	// Get decodes the full release from storage (one API request).
	Get func(ctx context.Context) (*helmrelease.Release, error)
}

// ObjectRef names a released object.
type ObjectRef struct {
	GVK             schema.GroupVersionKind
	Namespace, Name string
}

// Result lets a hook ask for the next reconcile.
type Result struct {
	// RequeueAfter, if positive, asks for a reconcile after this long.
	RequeueAfter time.Duration
}

// Merge keeps the soonest positive requeue of two results.
func (r Result) Merge(o Result) Result {
	if o.RequeueAfter > 0 && (r.RequeueAfter == 0 || o.RequeueAfter < r.RequeueAfter) {
		r.RequeueAfter = o.RequeueAfter
	}
	return r
}

// Translator computes values from the custom resource.
type Translator interface {
	// Translate returns the values to release, given those computed so far
	// (the spec, or the previous translator's output).
	Translate(ctx context.Context, req Request, vals chartutil.Values) (chartutil.Values, error)
}

// PreRelease runs before each install or upgrade.
type PreRelease interface {
	PreRelease(ctx context.Context, req Request, vals chartutil.Values) (Result, error)
}

// PostRelease runs on every reconcile of a deployed, in-sync release.
type PostRelease interface {
	PostRelease(ctx context.Context, req Request, rel Release) (Result, error)
}

// BeforeUninstall runs before the release is uninstalled on deletion.
type BeforeUninstall interface {
	BeforeUninstall(ctx context.Context, req Request) (Result, error)
}

// Hook is one registered hook.
type Hook struct {
	// Name identifies the hook in conditions, events and logs.
	Name string
	// Timeout bounds each call (default DefaultTimeout).
	Timeout time.Duration
	// Impl implements one or more of Translator, PreRelease, PostRelease,
	// BeforeUninstall.
	Impl any
}

// Error is a hook's failure, naming the hook and the phase.
type Error struct {
	Hook, Phase string
	Err         error
}

func (e *Error) Error() string { return fmt.Sprintf("hook %s (%s): %v", e.Hook, e.Phase, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Phases, as named in errors.
const (
	PhaseTranslate       = "translate"
	PhasePreRelease      = "pre-release"
	PhasePostRelease     = "post-release"
	PhaseBeforeUninstall = "before-uninstall"
)
