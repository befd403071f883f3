package helm

import (
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	"k8s.io/kubectl/pkg/validation"
)

// ValidatorTTL is how long a manifest validator is reused before it is
// built anew (and sees CRDs added since).
const ValidatorTTL = CapabilitiesTTL

// validators shares manifest validators between Helm's kube clients.
//
// Helm builds a validator for every manifest it reads (kube.Client.Build),
// and each new validator fetches and parses the API server's OpenAPI v3
// document of every group-version in the manifest to learn that the server
// validates fields itself. Under load that parse was two thirds of the
// operator's CPU time (make bench, pprof). One validator per directive,
// whose verifier caches its answer per kind, removes the cost; Helm's own
// behaviour (client-side schema check only where the server cannot check
// fields) is unchanged.
type validators struct {
	mu    sync.Mutex
	byDir map[string]cachedValidator
	now   func() time.Time
}

type cachedValidator struct {
	schema validation.Schema
	at     time.Time
}

func newValidators() *validators {
	return &validators{byDir: map[string]cachedValidator{}, now: time.Now}
}

// get returns the shared validator for directive, building it with f when
// absent or older than ValidatorTTL.
func (v *validators) get(directive string, f kube.Factory) (validation.Schema, error) {
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
type reachedClient struct{ *kube.Client }

func (reachedClient) IsReachable() error { return nil }
