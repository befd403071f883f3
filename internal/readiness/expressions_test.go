package readiness

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var certKind = schema.GroupKind{Group: "pki.example.com", Kind: "Certificate"}

func certificate(gen int64, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "pki.example.com/v1", "kind": "Certificate",
		"metadata": map[string]any{"name": "web", "namespace": "apps", "generation": gen},
		"spec":     map[string]any{"commonName": "web.example.com"},
	}}
	if status != nil {
		u.Object["status"] = status
	}
	return u
}

func TestExpressionsJudgeAKindKstatusCannotRead(t *testing.T) {
	rules := mustRules(t, must(t, certKind,
		"status.?state.orValue('') == 'Issued'",
		"status.?state.orValue('') == 'Failed'",
		"status.?observedGeneration.orValue(0) != metadata.generation"))
	tests := []struct {
		name            string
		obj             *unstructured.Unstructured
		current, failed bool
		why             []string
	}{
		{"no status yet: in progress", certificate(1, nil), false, false, []string{"Certificate web: InProgress", "observedGeneration"}},
		{"issued for its generation", certificate(2, map[string]any{"observedGeneration": int64(2), "state": "Issued"}), true, false, nil},
		{"issued for an older generation", certificate(3, map[string]any{"observedGeneration": int64(2), "state": "Issued"}), false, false, []string{"InProgress"}},
		{"refused, with the object's own message", certificate(2, map[string]any{"observedGeneration": int64(2), "state": "Failed", "message": "issuer refused"}),
			false, true, []string{"Certificate web: Failed", "`status.?state.orValue('') == 'Failed'` holds", "(issuer refused)"}},
		{"a state no expression names", certificate(2, map[string]any{"observedGeneration": int64(2), "state": "Pending",
			"conditions": []any{map[string]any{"type": "Ready", "status": "False", "message": "waiting for the issuer"}}}),
			false, false, []string{"InProgress", "does not hold yet", "(waiting for the issuer)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			current, failed, why := rules.Check(tc.obj)
			if current != tc.current || failed != tc.failed {
				t.Fatalf("current %v failed %v (%s), want %v %v", current, failed, why, tc.current, tc.failed)
			}
			for _, w := range tc.why {
				if !strings.Contains(why, w) {
					t.Errorf("why %q does not say %q", why, w)
				}
			}
		})
	}
}

// An expression reading a missing field without has() or ?. does not
// hold; other kinds keep kstatus' verdict.
func TestExpressionsMissingFieldsAndOtherKinds(t *testing.T) {
	rules := mustRules(t, must(t, certKind, "status.state == 'Issued'", "", ""))
	if current, _, why := rules.Check(certificate(1, nil)); current || !strings.Contains(why, "does not hold yet") {
		t.Errorf("no status: current %v (%s), want in progress", current, why)
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}}
	if current, _, why := rules.Check(cm); !current {
		t.Errorf("a ConfigMap (kstatus: Current) is not current: %s", why)
	}
	var none *Rules
	if current, _, _ := none.Check(certificate(1, nil)); !current {
		t.Error("without rules kstatus judges the Certificate (no conditions: Current)")
	}
}

// An expression that fails for another reason than a missing field says
// so; the object is in progress, not failed.
func TestExpressionErrorsAreReported(t *testing.T) {
	rules := mustRules(t, must(t, certKind, "status.state > 3", "", ""))
	current, failed, why := rules.Check(certificate(1, map[string]any{"state": "Issued"}))
	if current || failed || !strings.Contains(why, "readiness expression `status.state > 3`") {
		t.Errorf("current %v failed %v why %q", current, failed, why)
	}
}

func TestNewExpressionsRefusesBadOnes(t *testing.T) {
	tests := []struct{ current, failed, inProgress, want string }{
		{"", "", "", "current: an expression is required"},
		{"status.state ==", "", "", "current: "},
		{"true", "status.state", "", ""}, // dyn: judged when evaluated
		{"true", "'Failed'", "", "failed: must be a boolean expression"},
		{"true", "", "1 + 1", "inProgress: must be a boolean expression"},
		{"true", "", "nosuchvar == 1", "inProgress: "},
	}
	for _, tc := range tests {
		_, err := NewExpressions(certKind, tc.current, tc.failed, tc.inProgress)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc, err, tc.want)
		}
	}
	a, b := must(t, certKind, "true", "", ""), must(t, certKind, "false", "", "")
	if _, err := NewRules(a, b); err == nil || !strings.Contains(err.Error(), "two entries") {
		t.Errorf("a kind twice: %v", err)
	}
}

func must(t *testing.T, gk schema.GroupKind, current, failed, inProgress string) *Expressions {
	t.Helper()
	e, err := NewExpressions(gk, current, failed, inProgress)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustRules(t *testing.T, es ...*Expressions) *Rules {
	t.Helper()
	r, err := NewRules(es...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Each evaluation has a deadline: one over a list too long to walk
// within it is cut, and the verdict says so (in progress, timed out,
// naming the expression); the same expression over a short list holds.
// A caller's context ending first is not the expression's timeout.
func TestExpressionsAreCutAtTheirDeadline(t *testing.T) {
	const expr = "status.?items.orValue([]).all(i, i >= 0)"
	rules := mustRules(t, must(t, certKind, expr, "", "").WithDeadline(time.Millisecond))
	items := make([]any, 50_000) // about a second of all() on a fast machine
	for i := range items {
		items[i] = int64(i)
	}
	v := rules.Judge(context.Background(), certificate(1, map[string]any{"items": items}))
	if v.Current || v.Failed || !v.TimedOut || !strings.Contains(v.Why, "`"+expr+"` did not finish within 1ms") {
		t.Errorf("a huge list: %+v", v)
	}
	if v := rules.Judge(context.Background(), certificate(1, map[string]any{"items": []any{int64(1)}})); !v.Current {
		t.Errorf("a short list: %+v", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slow := mustRules(t, must(t, certKind, expr, "", ""))
	if v := slow.Judge(ctx, certificate(1, map[string]any{"items": items})); v.Current || v.TimedOut {
		t.Errorf("the caller's context ended: %+v", v)
	}
	if d := must(t, certKind, expr, "", "").deadline; d != ExpressionDeadline {
		t.Errorf("default deadline %s, want %s", d, ExpressionDeadline)
	}
}
