package watches

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/chartkeeper/chartkeeper/internal/readiness"
)

// chartkeeper's own watch fields, beyond helm-operator's. Every one is
// optional; Load applies the documented defaults.

// Defaults of chartkeeper's own fields.
const (
	DefaultReleaseName       = "{{ .Name }}"
	DefaultReleaseNamespace  = "{{ .Namespace }}"
	DefaultMaxHistory        = 10
	DefaultRetries           = 3
	DefaultBackoffInitial    = 10 * time.Second
	DefaultBackoffMax        = 5 * time.Minute
	DefaultReadinessTimeout  = 5 * time.Minute
	DefaultUninstallTimeout  = 5 * time.Minute
	DefaultMaxInFlight       = 10
	DefaultTimeout           = 5 * time.Minute
	StrategyRollback         = "rollback"
	StrategyUninstall        = "uninstall"
	maxReleaseNameLength     = 53 // Helm's limit
	defaultRemediateStrategy = StrategyRollback
)

// Remediation says what to do when an install or upgrade fails.
type Remediation struct {
	// Retries is how many times a failed install or upgrade of the same
	// spec and chart is tried again before the CR is Stalled. Default 3.
	Retries *int `json:"retries,omitempty"`
	// Backoff between attempts: Initial, doubling up to Max.
	Backoff *Backoff `json:"backoff,omitempty"`
	// Strategy for a failed upgrade: "rollback" (default) to the last
	// deployed revision, or "uninstall".
	Strategy string `json:"strategy,omitempty"`
	// KeepFailedInstall leaves a failed install in place (for inspection)
	// instead of uninstalling it. Default false.
	KeepFailedInstall bool `json:"keepFailedInstall,omitempty"`
	// MaxInFlight bounds how many releases of the watch are remediated at
	// once after a readiness timeout: while that many remediations
	// (rollbacks, or uninstalls with strategy uninstall) of the watch's
	// releases are not ready yet, another release that times out keeps
	// waiting instead (Ready False ReadinessTimeout, "remediation
	// deferred"). A timeout is the one failure that may be the cluster's
	// and not the revision's: when the control plane is slow, thousands of
	// releases time out together, and rolling them all back doubles the
	// work that made them slow. Failures that are the revision's (an
	// action's error, a released object that failed, failed tests) are
	// remediated at once whatever this says. 0: no bound. Default 10.
	MaxInFlight *int `json:"maxInFlight,omitempty"`
}

// Backoff is an exponential backoff.
type Backoff struct {
	Initial *metav1.Duration `json:"initial,omitempty"` // default 10s
	Max     *metav1.Duration `json:"max,omitempty"`     // default 5m
}

// Readiness says whether a release must become Ready and how fast.
type Readiness struct {
	// Wait: a release whose objects are not all Ready within Timeout counts
	// as failed and is remediated. Default true.
	Wait *bool `json:"wait,omitempty"`
	// Timeout, default 5m.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
	// RemediateInstall: a first install (no revision deployed before) not
	// Ready within Timeout is remediated like a failed one (uninstalled and
	// installed again, up to the retries). Default false: it reports Ready
	// False ReadinessTimeout and keeps waiting; a slow database's volumes
	// are not thrown away and made again.
	RemediateInstall bool `json:"remediateInstall,omitempty"`
	// Expressions say in CEL when released objects of a kind kstatus cannot
	// read are ready, or have failed (see ReadinessExpression).
	Expressions []ReadinessExpression `json:"expressions,omitempty"`
}

// ReadinessExpression is the readiness of one kind in CEL, evaluated over
// each released object of that kind instead of kstatus (see
// readiness.Expressions for what an expression sees and the order they
// are tried in). A Failed object ends the readiness wait at once, as a
// timeout would.
type ReadinessExpression struct {
	// APIVersion and Kind name the kind (its group; any version).
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Current holds when the object is ready. Required.
	Current string `json:"current"`
	// Failed holds when the object has failed and will not become ready.
	Failed string `json:"failed,omitempty"`
	// InProgress holds while the object is being worked on.
	InProgress string `json:"inProgress,omitempty"`
}

// Uninstall configures deletion of a custom resource.
type Uninstall struct {
	// Wait keeps the finalizer until every released object is gone. Default true.
	Wait *bool `json:"wait,omitempty"`
	// Timeout bounds that wait; past it the finalizer is removed anyway. Default 5m.
	Timeout *metav1.Duration `json:"timeout,omitempty"`
}

// Policy is a watch's resolved release policy: every default applied.
type Policy struct {
	// Timeout bounds each Helm action, chart hooks included; a pending
	// revision younger than it may still be in progress.
	Timeout           time.Duration
	MaxHistory        int
	Retries           int
	BackoffInitial    time.Duration
	BackoffMax        time.Duration
	UpgradeStrategy   string
	KeepFailedInstall bool
	// MaxInFlight is remediation.maxInFlight (0: no bound).
	MaxInFlight      int
	Wait             bool
	ReadinessTimeout time.Duration
	// DriftMode says what is done about released objects changed outside
	// Helm; DriftIgnore lists the fields that are never drift.
	DriftMode        DriftMode
	DriftIgnore      []DriftIgnore
	UninstallWait    bool
	UninstallTimeout time.Duration
	// Adopt: a release made outside chartkeeper is taken over (watch adopt).
	Adopt bool
	// RemediateInstall: a first install not ready in time is remediated
	// (readiness.remediateInstall); by default it is waited for.
	RemediateInstall bool
	// Health judges the readiness of kinds with readiness.expressions;
	// nil: kstatus judges every kind.
	Health *readiness.Rules
	// Approval is upgrade.approval: ApprovalManual makes an upgrade wait
	// for a person's approval of its plan.
	Approval Approval
	// AllowResourceAutoApproval is upgrade.allowResourceAutoApproval: a
	// resource's approval annotation may lift a manual approval.
	AllowResourceAutoApproval bool
	// Test is the chart tests' gate (watch test).
	Test TestPolicy
}

// Backoff returns the wait before attempt number failures+1.
func (p Policy) Backoff(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := p.BackoffInitial
	for i := 1; i < failures && d < p.BackoffMax; i++ {
		d *= 2
	}
	return min(d, p.BackoffMax)
}

func durOr(d *metav1.Duration, def time.Duration) time.Duration {
	if d == nil {
		return def
	}
	return d.Duration
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func intOr(i *int, def int) int {
	if i == nil {
		return def
	}
	return *i
}

// resolvePolicy applies defaults and validates chartkeeper's fields.
func (w *Watch) resolvePolicy(add func(field, format string, args ...any)) {
	p := Policy{
		Timeout:          durOr(w.Timeout, DefaultTimeout),
		MaxHistory:       intOr(w.MaxHistory, DefaultMaxHistory),
		Retries:          DefaultRetries,
		BackoffInitial:   DefaultBackoffInitial,
		BackoffMax:       DefaultBackoffMax,
		UpgradeStrategy:  defaultRemediateStrategy,
		MaxInFlight:      DefaultMaxInFlight,
		Wait:             true,
		ReadinessTimeout: DefaultReadinessTimeout,
		DriftMode:        DriftCorrect,
		UninstallWait:    true,
		UninstallTimeout: DefaultUninstallTimeout,
		Adopt:            w.Adopt,
	}
	if r := w.Remediation; r != nil {
		p.Retries = intOr(r.Retries, DefaultRetries)
		if r.Backoff != nil {
			p.BackoffInitial = durOr(r.Backoff.Initial, DefaultBackoffInitial)
			p.BackoffMax = durOr(r.Backoff.Max, DefaultBackoffMax)
		}
		if r.Strategy != "" {
			p.UpgradeStrategy = r.Strategy
		}
		p.KeepFailedInstall = r.KeepFailedInstall
		p.MaxInFlight = intOr(r.MaxInFlight, DefaultMaxInFlight)
	}
	if r := w.Readiness; r != nil {
		p.Wait = boolOr(r.Wait, true)
		p.ReadinessTimeout = durOr(r.Timeout, DefaultReadinessTimeout)
		p.RemediateInstall = r.RemediateInstall
		p.Health = resolveExpressions(r.Expressions, add)
	}
	p.DriftMode, p.DriftIgnore = w.Drift.resolve(add)
	p.Approval, p.AllowResourceAutoApproval = w.Upgrade.resolve(add)
	p.Test = w.Test.resolve(p.Timeout, add)
	if u := w.Uninstall; u != nil {
		p.UninstallWait = boolOr(u.Wait, true)
		p.UninstallTimeout = durOr(u.Timeout, DefaultUninstallTimeout)
	}

	if p.Timeout <= 0 {
		add("timeout", "must be a positive duration, got %s", p.Timeout)
	}
	if p.MaxHistory < 0 {
		add("maxHistory", "must be 0 (unlimited) or more, got %d", p.MaxHistory)
	}
	if p.Retries < 0 {
		add("remediation.retries", "must not be negative, got %d", p.Retries)
	}
	if p.MaxInFlight < 0 {
		add("remediation.maxInFlight", "must be 0 (no bound) or more, got %d", p.MaxInFlight)
	}
	if p.BackoffInitial <= 0 || p.BackoffMax < p.BackoffInitial {
		add("remediation.backoff", "initial must be positive and max at least initial, got %s and %s", p.BackoffInitial, p.BackoffMax)
	}
	if p.UpgradeStrategy != StrategyRollback && p.UpgradeStrategy != StrategyUninstall {
		add("remediation.strategy", "must be %q or %q, got %q", StrategyRollback, StrategyUninstall, p.UpgradeStrategy)
	}
	if p.ReadinessTimeout <= 0 {
		add("readiness.timeout", "must be positive, got %s", p.ReadinessTimeout)
	}
	if p.UninstallTimeout <= 0 {
		add("uninstall.timeout", "must be positive, got %s", p.UninstallTimeout)
	}
	w.Policy = p

	nameT, err := parseNameTemplate("releaseName", w.ReleaseName, DefaultReleaseName)
	if err != nil {
		add("releaseName", "%v", err)
	}
	nsT, err := parseNameTemplate("releaseNamespace", w.ReleaseNamespace, DefaultReleaseNamespace)
	if err != nil {
		add("releaseNamespace", "%v", err)
	}
	w.releaseName, w.releaseNamespace = nameT, nsT
}

func parseNameTemplate(name, text, def string) (*template.Template, error) {
	if text == "" {
		text = def
	}
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, err
	}
	// A loop ({{ range 1000000000 }}) or a template calling templates
	// could run for ever on every reconcile: a name needs neither.
	if what := loopOrCall(t.Root); what != "" {
		return nil, fmt.Errorf("%q uses %s: a name template may not loop or call templates", text, what)
	}
	return t, nil
}

// loopOrCall names the first range or template action in a parse tree.
func loopOrCall(n parse.Node) string {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return ""
		}
		for _, c := range n.Nodes {
			if what := loopOrCall(c); what != "" {
				return what
			}
		}
	case *parse.RangeNode:
		return "range"
	case *parse.TemplateNode:
		return "template " + n.Name
	case *parse.IfNode:
		return firstOf(loopOrCall(n.List), loopOrCall(n.ElseList))
	case *parse.WithNode:
		return firstOf(loopOrCall(n.List), loopOrCall(n.ElseList))
	}
	return ""
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ReleaseRef names the Helm release of one custom resource.
type ReleaseRef struct {
	Name      string
	Namespace string
}

// NameData is what releaseName and releaseNamespace templates see.
type NameData struct {
	Name      string
	Namespace string
	Kind      string
}

// Release returns the release name and namespace for a custom resource,
// from the watch's templates. An error means the templates produce an
// invalid name for this resource.
func (w Watch) Release(name, namespace string) (ReleaseRef, error) {
	d := NameData{Name: name, Namespace: namespace, Kind: w.Kind}
	var n, ns bytes.Buffer
	if w.releaseName == nil || w.releaseNamespace == nil {
		return ReleaseRef{Name: name, Namespace: namespace}, nil
	}
	if err := w.releaseName.Execute(&n, d); err != nil {
		return ReleaseRef{}, fmt.Errorf("releaseName template: %w", err)
	}
	if err := w.releaseNamespace.Execute(&ns, d); err != nil {
		return ReleaseRef{}, fmt.Errorf("releaseNamespace template: %w", err)
	}
	ref := ReleaseRef{Name: n.String(), Namespace: ns.String()}
	if len(ref.Name) == 0 || len(ref.Name) > maxReleaseNameLength {
		return ref, fmt.Errorf("release name %q must be 1 to %d characters (Helm's limit); shorten the resource's name or set releaseName in watches.yaml", ref.Name, maxReleaseNameLength)
	}
	if chartutil.ValidateReleaseName(ref.Name) != nil {
		return ref, fmt.Errorf("release name %q is not one Helm accepts (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit); fix releaseName in watches.yaml", ref.Name)
	}
	if ref.Namespace == "" {
		return ref, fmt.Errorf("release namespace is empty: a cluster-scoped kind needs releaseNamespace in watches.yaml")
	}
	if msgs := validation.IsDNS1123Label(ref.Namespace); len(msgs) > 0 {
		return ref, fmt.Errorf("release namespace %q is not a namespace name: %s; fix releaseNamespace in watches.yaml", ref.Namespace, strings.Join(msgs, "; "))
	}
	return ref, nil
}
