package helm

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

const teamA = "system:serviceaccount:team-a:chartkeeper-release"

// forbidden is the API server's refusal of user, as client-go returns it.
func forbidden(user, verb, group, resource, name, where string) error {
	return apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: resource}, name,
		fmt.Errorf("User %q cannot %s resource %q in API group %q %s", user, verb, resource, group, where))
}

func TestExplainAs(t *testing.T) {
	crb := forbidden(teamA, "get", "rbac.authorization.k8s.io", "clusterrolebindings", "team-a-web", "at the cluster scope")
	// How Helm's install reports it: the refusal wrapped in its own words.
	helmErr := fmt.Errorf(`Unable to continue with install: could not get information about the resource ClusterRoleBinding "team-a-web" in namespace "": %w`, crb)
	tests := []struct {
		name string
		err  error
		user string
		want string // "": err unchanged
	}{
		{name: "cluster-scoped kind", err: helmErr, user: teamA,
			want: `the release runs as ServiceAccount team-a/chartkeeper-release, which may not get clusterrolebindings.rbac.authorization.k8s.io: ` + helmErr.Error()},
		{name: "core group", user: teamA,
			err:  forbidden(teamA, "create", "", "configmaps", "web", `in the namespace "team-a"`),
			want: `the release runs as ServiceAccount team-a/chartkeeper-release, which may not create configmaps: configmaps "web" is forbidden: User "` + teamA + `" cannot create resource "configmaps" in API group "" in the namespace "team-a"`},
		{name: "subresource", user: teamA,
			err:  forbidden(teamA, "patch", "apps", "deployments/scale", "web", `in the namespace "team-a"`),
			want: `the release runs as ServiceAccount team-a/chartkeeper-release, which may not patch deployments/scale.apps: `},
		{name: "a user that is no ServiceAccount", user: "jane",
			err:  forbidden("jane", "delete", "apps", "deployments", "web", `in the namespace "team-a"`),
			want: `the release runs as jane, which may not delete deployments.apps: `},
		{name: "the escalation check", user: teamA,
			err: apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, "web",
				fmt.Errorf("user %q (groups=%q) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}", teamA, []string{"system:serviceaccounts", "system:authenticated"})),
			want: `the release runs as ServiceAccount team-a/chartkeeper-release, which may not grant what roles.rbac.authorization.k8s.io "web" grants (it does not hold all of it, nor may escalate or bind): roles.rbac.authorization.k8s.io "web" is forbidden: user "` + teamA + `" (groups=["system:serviceaccounts" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:`},
		{name: "another user's escalation", user: teamA,
			err: apierrors.NewForbidden(schema.GroupResource{Group: "rbac.authorization.k8s.io", Resource: "roles"}, "web",
				errors.New(`user "jane" (groups=["a"]) is attempting to grant RBAC permissions not currently held:`))},
		{name: "another user's refusal", user: teamA,
			err: forbidden("system:serviceaccount:chartkeeper-system:controller-manager", "get", "", "secrets", "x", `in the namespace "team-a"`)},
		{name: "not impersonating", user: "", err: helmErr},
		{name: "not a refusal", user: teamA, err: errors.New(`Deployment "web" is invalid: spec.replicas: must be at least 0`)},
		{name: "no error", user: teamA, err: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExplainAs(tt.err, tt.user)
			if tt.want == "" {
				if got != tt.err {
					t.Errorf("got %v, want the error unchanged: %v", got, tt.err)
				}
				return
			}
			var fa *ForbiddenAs
			if !errors.As(got, &fa) || fa.User != tt.user {
				t.Fatalf("got %T %v, want a *ForbiddenAs of %s", got, got, tt.user)
			}
			if msg := got.Error(); len(msg) < len(tt.want) || msg[:len(tt.want)] != tt.want {
				t.Errorf("message\n  %s\ndoes not start with\n  %s", msg, tt.want)
			}
			if !apierrors.IsForbidden(got) || !errors.Is(got, tt.err) {
				t.Errorf("the API server's error is not kept: %v", got)
			}
			if again := ExplainAs(fmt.Errorf("upgrade: %w", got), tt.user); errors.Unwrap(again) != got {
				t.Errorf("explained twice: %v", again)
			}
		})
	}
}

func TestImpersonating(t *testing.T) {
	cfg := &rest.Config{Host: "https://k8s", BearerToken: "operator"}
	c := Impersonating(cfg, teamA)
	if c.Impersonate.UserName != teamA || c.BearerToken != "operator" || c.Host != cfg.Host {
		t.Errorf("impersonating config %+v", c)
	}
	if cfg.Impersonate.UserName != "" {
		t.Error("the operator's own config was changed")
	}
	g := &restGetter{cfg: cfg, namespace: "team-a"}
	if g.as("") != g {
		t.Error(`as("") made another getter`)
	}
	as := g.as(teamA)
	if got, _ := as.ToRESTConfig(); got.Impersonate.UserName != teamA || as.namespace != "team-a" {
		t.Errorf("getter as %s: %+v, namespace %q", teamA, got.Impersonate, as.namespace)
	}
	if got, _ := g.ToRESTConfig(); got.Impersonate.UserName != "" {
		t.Error("the operator's getter impersonates")
	}
}
