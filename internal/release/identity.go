package release

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/helm"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// A watch with impersonate runs each release as a ServiceAccount
// (docs/multi-tenancy.md): every Helm action (guard: helm.Guard.As), and
// every write to released objects outside Helm (drift checks and
// corrections, pruning: writer) carries that account's identity, so the
// release can do only what the account may. The release storage, the
// custom resource's status, Events and the caches stay the operator's.

// resolveAccount sets the account the step's release runs as: the watch's
// template, or the resource's chartkeeper.dev/service-account annotation
// where the watch allows one. An account that cannot be used is a
// terminal error of the resource (ServiceAccountRefused) until it or the
// watch changes; a deleted resource is still uninstalled, as the watch's
// own account.
func (s *step) resolveAccount() error {
	w, obj := s.t.Watch, s.obj
	override := obj.GetAnnotations()[api.AnnotationServiceAccount]
	acc, err := w.ServiceAccountFor(obj.GetName(), obj.GetNamespace(), s.d.ref.Namespace, override)
	if err != nil && override != "" {
		acc, _ = w.ServiceAccountFor(obj.GetName(), obj.GetNamespace(), s.d.ref.Namespace, "")
	}
	s.d.account = acc
	if err != nil {
		return &ChartError{Err: err, Reason: api.ReasonServiceAccountRefused}
	}
	return nil
}

// user is the identity the step's Helm actions impersonate ("": the
// operator's).
func (s *step) user() string {
	if s.d.account.IsZero() {
		return ""
	}
	return s.d.account.UserName()
}

type accountKey struct{}

// withAccount carries the step's account to the engine's writes to
// released objects made below the step (drift checks run while observing).
func withAccount(ctx context.Context, a watches.ServiceAccountRef) context.Context {
	if a.IsZero() {
		return ctx
	}
	return context.WithValue(ctx, accountKey{}, a.UserName())
}

// writer is the client that writes released objects for the step of ctx:
// the operator's own, or one impersonating the step's account. Its errors
// name the account when it was refused.
func (e *Engine) writer(ctx context.Context) (client.Client, string, error) {
	user, _ := ctx.Value(accountKey{}).(string)
	if user == "" || e.impersonate == nil {
		return e.live, "", nil
	}
	c, err := e.impersonate.clientFor(user)
	return c, user, err
}

// explain names the account in an error of a write made as it.
func explain(err error, user string) error { return helm.ExplainAs(err, user) }

// impersonation makes (once per user) clients that impersonate a user.
type impersonation struct {
	newClient func(user string) (client.Client, error)
	mu        sync.Mutex
	clients   map[string]client.Client
}

func (i *impersonation) clientFor(user string) (client.Client, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if c, ok := i.clients[user]; ok {
		return c, nil
	}
	c, err := i.newClient(user)
	if err != nil {
		return nil, err
	}
	i.clients[user] = c
	return c, nil
}

// WithImpersonation sets how the engine makes a client that impersonates
// a user, for the releases of watches with impersonate (default: none;
// such a watch's writes outside Helm then use the operator's client).
func WithImpersonation(newClient func(user string) (client.Client, error)) Option {
	return func(e *Engine) {
		e.impersonate = &impersonation{newClient: newClient, clients: map[string]client.Client{}}
	}
}
