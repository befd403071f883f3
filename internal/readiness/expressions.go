package readiness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// Expressions say in CEL when objects of one kind are ready, for kinds
// kstatus cannot read (a custom resource whose status has no Ready
// condition, say): the watch's readiness.expressions entry for the kind.
//
// An expression sees the object's top-level fields as variables
// (apiVersion, kind, metadata, spec, status; a missing one is an empty
// map) and the whole object as self. They are tried in the order
// InProgress, Failed, Current; the first that holds gives the status, and
// when none holds the object is in progress. An expression that reads a
// field the object lacks does not hold (use has() or the optional syntax,
// status.?phase.orValue(""), to say otherwise explicitly).
//
// Each evaluation has a deadline (ExpressionDeadline): one cut there
// leaves the object InProgress and says so (Verdict.TimedOut).
type Expressions struct {
	Kind                        schema.GroupKind
	current, failed, inProgress *program
	deadline                    time.Duration
}

// program is one compiled expression and its source.
type program struct {
	text string
	prg  cel.Program
}

// costLimit bounds one evaluation (CEL's cost units: about one per node
// visited or list element), so that no expression can stall a reconcile.
const costLimit = 1_000_000

// ExpressionDeadline bounds the time of one evaluation. The cost limit
// alone does not bound it: CEL's cost tracking makes a comprehension
// quadratic in its list's length, so all() over 150,000 items ran about
// two minutes under the limit, holding the kind's worker.
const ExpressionDeadline = time.Second

// interruptEvery is how many iterations of a comprehension run between
// two looks at the deadline.
const interruptEvery = 100

// objectVars are the variables an expression sees besides self.
var objectVars = []string{"apiVersion", "kind", "metadata", "spec", "status"}

var celEnv = func() *cel.Env {
	opts := []cel.EnvOption{cel.OptionalTypes(), cel.Variable("self", cel.DynType)}
	for _, v := range objectVars {
		opts = append(opts, cel.Variable(v, cel.DynType))
	}
	env, err := cel.NewEnv(opts...)
	if err != nil {
		panic(err) // static declarations
	}
	return env
}()

// NewExpressions compiles the expressions of one kind. current is
// required; failed and inProgress may be empty. The error names the
// expression that does not compile or is not a boolean.
func NewExpressions(kind schema.GroupKind, current, failed, inProgress string) (*Expressions, error) {
	if strings.TrimSpace(current) == "" {
		return nil, errors.New("current: an expression is required")
	}
	e := &Expressions{Kind: kind, deadline: ExpressionDeadline}
	for _, c := range []struct {
		name, text string
		into       **program
	}{{"current", current, &e.current}, {"failed", failed, &e.failed}, {"inProgress", inProgress, &e.inProgress}} {
		if strings.TrimSpace(c.text) == "" {
			continue
		}
		p, err := compile(c.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		*c.into = p
	}
	return e, nil
}

func compile(text string) (*program, error) {
	ast, iss := celEnv.Compile(text)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if t := ast.OutputType(); !t.IsExactType(types.BoolType) && !t.IsExactType(types.DynType) {
		return nil, fmt.Errorf("must be a boolean expression, %q is of type %s", text, t)
	}
	prg, err := celEnv.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(interruptEvery))
	if err != nil {
		return nil, err
	}
	return &program{text: text, prg: prg}, nil
}

// WithDeadline sets the deadline of each evaluation (ExpressionDeadline
// by default) and returns e.
func (e *Expressions) WithDeadline(d time.Duration) *Expressions {
	e.deadline = d
	return e
}

// holds evaluates p over the object's variables within deadline: false
// when p is unset or reads a field the object lacks; an error when it
// fails otherwise (context.DeadlineExceeded when it was cut).
func (p *program) holds(ctx context.Context, vars map[string]any, deadline time.Duration) (bool, error) {
	if p == nil {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	out, _, err := p.prg.ContextEval(ctx, vars)
	if err != nil {
		if isMissingField(err) {
			return false, nil
		}
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("gave %v, not a boolean", out.Value())
	}
	return b, nil
}

// isMissingField reports whether an evaluation failed only because the
// object lacks a field the expression reads.
func isMissingField(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "no such key") || strings.HasPrefix(msg, "no such attribute")
}

// Status evaluates the expressions over an object: its status and, unless
// Current, what matched (or why nothing could be told); timedOut: an
// expression was cut at its deadline (the status is then InProgress).
func (e *Expressions) Status(ctx context.Context, o *unstructured.Unstructured) (st status.Status, why string, timedOut bool) {
	vars := map[string]any{"self": o.Object}
	for _, v := range objectVars {
		if x, ok := o.Object[v]; ok {
			vars[v] = x
		} else {
			vars[v] = map[string]any{}
		}
	}
	for _, c := range []struct {
		st status.Status
		p  *program
	}{{status.InProgressStatus, e.inProgress}, {status.FailedStatus, e.failed}, {status.CurrentStatus, e.current}} {
		ok, err := c.p.holds(ctx, vars, e.deadline)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return status.InProgressStatus, fmt.Sprintf("readiness expression `%s` did not finish within %s: too costly over this object", c.p.text, e.deadline), true
		}
		if err != nil {
			return status.InProgressStatus, fmt.Sprintf("readiness expression `%s`: %v", c.p.text, err), false
		}
		if ok {
			return c.st, fmt.Sprintf("readiness expression `%s` holds%s", c.p.text, statusMessage(o)), false
		}
	}
	return status.InProgressStatus, fmt.Sprintf("readiness expression `%s` does not hold yet%s", e.current.text, statusMessage(o)), false
}

// statusMessage is what the object says of itself (status.message, or
// the message of a condition that is not True), as " (message)".
func statusMessage(o *unstructured.Unstructured) string {
	if m, _, _ := unstructured.NestedString(o.Object, "status", "message"); m != "" {
		return " (" + m + ")"
	}
	conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if s, _ := cm["status"].(string); s == "True" {
			continue
		}
		if m, _ := cm["message"].(string); m != "" {
			return " (" + m + ")"
		}
	}
	return ""
}

// Rules are the readiness expressions of a watch, by kind; the zero value
// (or nil) has none, and every object is read by kstatus.
type Rules struct {
	byKind map[schema.GroupKind]*Expressions
}

// NewRules indexes expressions by kind; a kind given twice is an error.
func NewRules(es ...*Expressions) (*Rules, error) {
	r := &Rules{byKind: map[schema.GroupKind]*Expressions{}}
	for _, e := range es {
		if _, dup := r.byKind[e.Kind]; dup {
			return nil, fmt.Errorf("kind %s has two entries", e.Kind)
		}
		r.byKind[e.Kind] = e
	}
	return r, nil
}

// For returns the expressions of a kind, or nil.
func (r *Rules) For(gk schema.GroupKind) *Expressions {
	if r == nil {
		return nil
	}
	return r.byKind[gk]
}

// Kinds lists the kinds that have expressions.
func (r *Rules) Kinds() []schema.GroupKind {
	if r == nil {
		return nil
	}
	out := make([]schema.GroupKind, 0, len(r.byKind))
	for gk := range r.byKind {
		out = append(out, gk)
	}
	return out
}

// Verdict is one object's readiness as Rules judge it.
type Verdict struct {
	Current, Failed bool
	// Why names the object and says why it is not Current ("" when it is).
	Why string
	// TimedOut: a readiness expression was cut at its deadline.
	TimedOut bool
}

// Judge is the package's Check with these rules: an object of a kind
// with expressions is judged by them (each evaluation within its
// deadline, and within ctx), any other by kstatus.
func (r *Rules) Judge(ctx context.Context, o *unstructured.Unstructured) Verdict {
	e := r.For(o.GroupVersionKind().GroupKind())
	if e == nil {
		current, failed, why := Check(o)
		return Verdict{Current: current, Failed: failed, Why: why}
	}
	st, msg, timedOut := e.Status(ctx, o)
	if st == status.CurrentStatus {
		return Verdict{Current: true}
	}
	return Verdict{Failed: st == status.FailedStatus, TimedOut: timedOut,
		Why: fmt.Sprintf("%s %s: %s: %s", o.GetKind(), o.GetName(), st, msg)}
}

// Check is Judge without its TimedOut.
func (r *Rules) Check(o *unstructured.Unstructured) (current, failed bool, why string) {
	v := r.Judge(context.Background(), o)
	return v.Current, v.Failed, v.Why
}
