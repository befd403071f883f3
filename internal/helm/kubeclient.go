package helm

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	"k8s.io/kubectl/pkg/validation"

	"github.com/chartkeeper/chartkeeper/internal/ownership"
)

// ValidatorTTL is how long a manifest validator is reused before it is
// built anew (and sees CRDs added since).
const ValidatorTTL = CapabilitiesTTL

// validators shares manifest validators between Helm's kube clients.
//
// Helm builds a validator for every manifest it reads (kube.Client.Build).
// That validator checks a manifest against the OpenAPI schema only when the
// API server cannot validate fields itself (before Kubernetes 1.27); to
// find out, each new one fetches and parses the server's OpenAPI v3
// document of every group-version in the manifest. Under load that parse
// was two thirds of the operator's CPU time, and its garbage the largest
// part of its peak memory (make bench, pprof).
//
// So: against a server that validates fields, the validator is the one
// Helm's would amount to, one that accepts every manifest, with no
// download; against an older server, Helm's validator is built once per
// directive and reused (its verifier caches its answer per kind).
type validators struct {
	mu    sync.Mutex
	byDir map[string]cachedValidator
	now   func() time.Time
	// serverValidates reports whether the API server validates fields
	// (Kubernetes 1.27 and later). Nil: unknown, use Helm's validator.
	serverValidates func() bool
}

type cachedValidator struct {
	schema validation.Schema
	at     time.Time
}

func newValidators() *validators {
	return &validators{byDir: map[string]cachedValidator{}, now: time.Now}
}

// get returns the validator for directive: none against a server that
// validates fields, else the shared one, built with f when absent or older
// than ValidatorTTL.
func (v *validators) get(directive string, f kube.Factory) (validation.Schema, error) {
	if v.serverValidates != nil && v.serverValidates() {
		return validation.NullSchema{}, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if c, ok := v.byDir[directive]; ok && v.now().Sub(c.at) < ValidatorTTL {
		return c.schema, nil
	}
	s, err := f.Validator(directive)
	if err != nil {
		return nil, err
	}
	v.byDir[directive] = cachedValidator{schema: s, at: v.now()}
	return s, nil
}

// sharedValidatorFactory is Helm's factory for one kube client with the
// validator taken from the shared cache.
type sharedValidatorFactory struct {
	kube.Factory
	shared *validators
}

func (f sharedValidatorFactory) Validator(directive string) (validation.Schema, error) {
	return f.shared.get(directive, f.Factory)
}

// reachedClient is Helm's kube client without the reachability probe.
//
// Helm asks the API server for its version before every install, upgrade
// and uninstall (kube.Client.IsReachable). The operator talks to the API
// server all the time through its informers, and an unreachable server
// fails the action's first real request with the same cause, so the probe
// only cost a request per action. Embedding *kube.Client keeps every other
// method, so Helm's optional interfaces (deletion propagation, waiting)
// still apply.
type reachedClient struct {
	*kube.Client
	// asReleased: see Guard.AsReleased (nil: every object is read).
	asReleased func(ownership.Placement) bool
	// wrote: see Guard.Wrote (nil: not told).
	wrote func(metav1.Object)
	// deleted: see Guard.Deleted (nil: not told).
	deleted func(ownership.Placement, bool)
	// fresh: an install that creates before it reads (nil: not an install).
	fresh *createFirst
}

func (reachedClient) IsReachable() error { return nil }

// gone tells Guard.Deleted of an object deleted, and whether its DELETE's
// answer said it is gone.
func (c reachedClient) gone(info *resource.Info, gone bool) {
	if c.deleted != nil {
		c.deleted(placementOf(info), gone)
	}
}

// written tells Guard.Wrote of objects as a write of this action answered
// them (an info Helm's code refreshed from the answer has its UID).
func (c reachedClient) written(infos ...*resource.Info) {
	if c.wrote == nil {
		return
	}
	for _, info := range infos {
		if o, err := meta.Accessor(info.Object); err == nil && o.GetUID() != "" {
			c.wrote(o)
		}
	}
}

// Build is Helm's; an install's first manifest is its release's objects
// (see createFirst).
func (c reachedClient) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	list, err := c.Client.Build(r, validate)
	if err == nil && c.fresh != nil {
		c.fresh.took(list)
	}
	return list, err
}

// Create is Helm's, except an install's create of its release's objects
// (see createFirst).
func (c reachedClient) Create(resources kube.ResourceList) (*kube.Result, error) {
	if c.fresh != nil && c.fresh.isRelease(resources) {
		return c.create(resources)
	}
	if err := c.fresh.beforeOtherWrite(); err != nil {
		return nil, err
	}
	return c.Client.Create(resources)
}

// validatesFields reports whether a Kubernetes version's API server
// validates fields itself (server-side field validation, GA in 1.27).
func validatesFields(kv chartutil.KubeVersion) bool {
	major, err1 := strconv.Atoi(kv.Major)
	minor, err2 := strconv.Atoi(strings.TrimRight(kv.Minor, "+"))
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 1 || major == 1 && minor >= 27
}
