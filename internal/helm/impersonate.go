package helm

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/client-go/rest"
)

// as returns a getter whose requests impersonate user (every write and
// read of released objects); discovery and REST mapping stay shared, as
// the operator's. "" returns g.
func (g *restGetter) as(user string) *restGetter {
	if user == "" {
		return g
	}
	c := *g
	c.cfg = Impersonating(g.cfg, user)
	return &c
}

// Impersonating returns a copy of cfg whose requests impersonate user.
func Impersonating(cfg *rest.Config, user string) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user}
	return c
}

// serviceAccountPrefix starts a ServiceAccount's user name.
const serviceAccountPrefix = "system:serviceaccount:"

// ForbiddenAs is an action's error when the user it impersonates was
// refused a request: it names the account, the verb and the resource
// before the API server's own words.
type ForbiddenAs struct {
	User, Verb, Resource string
	Err                  error
}

func (e *ForbiddenAs) Error() string {
	who := e.User
	if rest, ok := strings.CutPrefix(e.User, serviceAccountPrefix); ok {
		who = "ServiceAccount " + strings.Replace(rest, ":", "/", 1)
	}
	return fmt.Sprintf("the release runs as %s, which may not %s %s: %v", who, e.Verb, e.Resource, e.Err)
}

func (e *ForbiddenAs) Unwrap() error { return e.Err }

// ExplainAs wraps err in a *ForbiddenAs when it is an RBAC refusal of
// user (""; nil; another refusal: err as it is).
func ExplainAs(err error, user string) error {
	var already *ForbiddenAs
	if err == nil || user == "" || errors.As(err, &already) {
		return err
	}
	if m := escalation.FindStringSubmatch(err.Error()); m != nil && m[3] == user {
		return &ForbiddenAs{User: user, Verb: "grant", Resource: fmt.Sprintf("what %s %q grants (it does not hold all of it, nor may escalate or bind)", m[1], m[2]), Err: err}
	}
	m := denied.FindStringSubmatch(err.Error())
	if m == nil || !strings.Contains(err.Error(), `User "`+user+`"`) {
		return err
	}
	res := m[2]
	if m[3] != "" {
		res += "." + m[3]
	}
	return &ForbiddenAs{User: user, Verb: m[1], Resource: res, Err: err}
}
