package watches

import (
	"fmt"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Impersonate makes every Helm action of a watch, and every write to its
// released objects, run as a ServiceAccount instead of the operator
// (docs/multi-tenancy.md): a release can then do only what that account
// may do. Unset, releases run with the operator's own rights.
type Impersonate struct {
	// ServiceAccount is a Go template over NameData giving "name" (an
	// account in the release namespace) or "namespace/name", e.g.
	// "chartkeeper-release" or "{{ .Namespace }}/chartkeeper-release".
	// A namespace that depends on the resource must be the release
	// namespace; a fixed one ("platform/releaser") may be any.
	ServiceAccount string `json:"serviceAccount"`
	// AllowOverride lets a resource name another account of its release
	// namespace with the annotation chartkeeper.dev/service-account (as
	// Flux's spec.serviceAccountName). Default false: the annotation is
	// refused.
	AllowOverride bool `json:"allowOverride,omitempty"`
	// AllowServiceAccountFromName lets a template with a fixed namespace
	// take the account's name from the resource's name
	// ("platform/{{ .Name }}"): whoever may create a resource then picks
	// any account of that namespace. Default false: such a template is
	// refused at load.
	AllowServiceAccountFromName bool `json:"allowServiceAccountFromName,omitempty"`

	account *template.Template
	// fixedNamespace: the template's namespace is the same for every
	// resource (it may then name any namespace).
	fixedNamespace bool
}

// ServiceAccountRef names the account a release runs as.
type ServiceAccountRef struct {
	Namespace string
	Name      string
}

func (a ServiceAccountRef) String() string { return a.Namespace + "/" + a.Name }

// UserName is the account's user name, what an impersonated request
// carries (system:serviceaccount:<namespace>:<name>).
func (a ServiceAccountRef) UserName() string {
	return "system:serviceaccount:" + a.Namespace + ":" + a.Name
}

// IsZero reports whether no account is named (the operator's own rights).
func (a ServiceAccountRef) IsZero() bool { return a.Name == "" }

// validate parses the template; two renderings over different resources
// tell whether its namespace is fixed.
func (p *Impersonate) validate(add func(field, format string, args ...any)) {
	if p == nil {
		return
	}
	if strings.TrimSpace(p.ServiceAccount) == "" {
		add("impersonate.serviceAccount", `must name the account releases run as, e.g. "chartkeeper-release" or "{{ .Namespace }}/chartkeeper-release"`)
		return
	}
	t, err := parseNameTemplate("serviceAccount", p.ServiceAccount, "")
	if err != nil {
		add("impersonate.serviceAccount", "%v", err)
		return
	}
	p.account = t
	a, errA := p.render(NameData{Name: "a", Namespace: "ns-a", Kind: "K"}, "ns-a")
	b, errB := p.render(NameData{Name: "b", Namespace: "ns-b", Kind: "K"}, "ns-b")
	switch {
	case errA != nil:
		add("impersonate.serviceAccount", "%v", errA)
	case errB != nil:
		add("impersonate.serviceAccount", "%v", errB)
	default:
		// The same for two resources of different namespaces (and release
		// namespaces): it depends on neither, even if it is "ns-a".
		p.fixedNamespace = a.Namespace == b.Namespace
		if p.fixedNamespace && !p.AllowServiceAccountFromName && dependsOnName(t, "K") {
			add("impersonate.serviceAccount", "%q takes the account's name from the resource's name in the fixed namespace %s: whoever may create a resource of the kind would choose any account of %s to release as; name one account, or set impersonate.allowServiceAccountFromName: true if everyone who may create one may use every account of %s",
				p.ServiceAccount, a.Namespace, a.Namespace, a.Namespace)
		}
	}
}

// render executes the template for one resource; an account without a
// namespace is in releaseNamespace.
func (p *Impersonate) render(d NameData, releaseNamespace string) (ServiceAccountRef, error) {
	var b strings.Builder
	if err := p.account.Execute(&b, d); err != nil {
		return ServiceAccountRef{}, fmt.Errorf("serviceAccount template: %w", err)
	}
	return parseAccount(b.String(), releaseNamespace)
}

// parseAccount reads "name" or "namespace/name".
func parseAccount(s, releaseNamespace string) (ServiceAccountRef, error) {
	ref := ServiceAccountRef{Namespace: releaseNamespace, Name: s}
	if ns, name, ok := strings.Cut(s, "/"); ok {
		ref = ServiceAccountRef{Namespace: ns, Name: name}
	}
	if msgs := validation.IsDNS1123Label(ref.Namespace); len(msgs) > 0 {
		return ref, fmt.Errorf("service account %q: namespace %q is not valid: %s", s, ref.Namespace, strings.Join(msgs, "; "))
	}
	if msgs := validation.IsDNS1123Subdomain(ref.Name); len(msgs) > 0 {
		return ref, fmt.Errorf("service account %q: name %q is not valid: %s", s, ref.Name, strings.Join(msgs, "; "))
	}
	return ref, nil
}

// ServiceAccountFor returns the account a resource's release runs as: the
// zero ref when the watch does not impersonate. override is the
// resource's chartkeeper.dev/service-account annotation ("" when unset):
// a name in the release namespace, taken only when the watch allows it.
// An error says why this resource cannot be released (a refused or
// invalid override, an account outside its release namespace).
func (w Watch) ServiceAccountFor(name, namespace, releaseNamespace, override string) (ServiceAccountRef, error) {
	p := w.Impersonate
	if p == nil || p.account == nil {
		if override != "" {
			return ServiceAccountRef{}, fmt.Errorf("the resource names service account %q, but its watch does not impersonate (impersonate in watches.yaml)", override)
		}
		return ServiceAccountRef{}, nil
	}
	if override != "" {
		if !p.AllowOverride {
			return ServiceAccountRef{}, fmt.Errorf("the resource names service account %q, but its watch does not allow that (impersonate.allowOverride in watches.yaml)", override)
		}
		if strings.Contains(override, "/") {
			return ServiceAccountRef{}, fmt.Errorf("service account %q: name an account of the release namespace %s, without a namespace", override, releaseNamespace)
		}
		return parseAccount(override, releaseNamespace)
	}
	ref, err := p.render(NameData{Name: name, Namespace: namespace, Kind: w.Kind}, releaseNamespace)
	if err != nil {
		return ref, err
	}
	if !p.fixedNamespace && ref.Namespace != releaseNamespace {
		return ref, fmt.Errorf("service account %s is outside the release namespace %s: a namespace taken from the resource must be the release namespace", ref, releaseNamespace)
	}
	return ref, nil
}

// FixedServiceAccountName is the account name when the template names the
// same one for every resource (its RBAC can then name it), else "".
func (p *Impersonate) FixedServiceAccountName() string {
	if p == nil || p.account == nil || p.AllowOverride {
		return ""
	}
	a, errA := p.render(NameData{Name: "a", Namespace: "ns-a", Kind: "K"}, "ns-a")
	b, errB := p.render(NameData{Name: "b", Namespace: "ns-b", Kind: "K"}, "ns-b")
	if errA != nil || errB != nil || a.Name != b.Name {
		return ""
	}
	return a.Name
}
