package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// hugeList is the length of the list the expression walks: far more than
// one evaluation gets done within its deadline (CEL's cost tracking makes
// all() quadratic in it), though well under its cost limit.
const hugeList = 100_000

// A readiness expression is evaluated with a deadline: one over a huge
// list (a Certificate whose status lists 100,000 items) is cut, and the
// resource says so (Ready False, ReadinessExpressionTimeout, naming the
// object and the expression), while another resource of the kind, whose
// Certificate is issued after that, becomes Ready: the kind's worker is
// not held by the first.
func TestReadinessExpressionsAreBounded(t *testing.T) {
	parallel(t, 45*time.Second)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-health-bounded.yaml")
	env, ns, _ := kindFixture(t, watchesFile, certGVK)
	ctx := context.Background()
	for _, name := range []string{"huge", "small"} {
		if err := env.Client.Create(ctx, newCR(certGVK, ns, name, map[string]any{"commonName": name + ".example.test"})); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"huge", "small"} {
		waitRevision(t, env, ns, name, 1)
	}

	items := make([]any, hugeList)
	for i := range items {
		items[i] = int64(i)
	}
	issue(t, env, ns, "huge")
	setStatus(t, env, certificateGVK, ns, "huge", func(gen int64) map[string]any {
		return map[string]any{"observedGeneration": gen, "state": "Issued", "items": items}
	})
	timedOut := func(ctx context.Context) error {
		_, st, err := getCR(ctx, env, certGVK, ns, "huge")
		if err != nil {
			return err
		}
		c := condition(st, api.ConditionReady)
		if c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonReadinessExpressionTimeout) ||
			!strings.Contains(c.Message, "Certificate huge") || !strings.Contains(c.Message, "all(i, i >= 0)") {
			return fmt.Errorf("want Ready False %s naming the Certificate and the expression, got %+v", api.ReasonReadinessExpressionTimeout, st.Conditions)
		}
		return nil
	}
	testenv.Eventually(t, healthWait, timedOut)

	// The other resource's Certificate is issued now: it becomes Ready,
	// the first still saying why it is not.
	issue(t, env, ns, "small")
	setStatus(t, env, certificateGVK, ns, "small", func(gen int64) map[string]any {
		return map[string]any{"observedGeneration": gen, "state": "Issued", "items": []any{int64(1), int64(2), int64(3)}}
	})
	waitCRReady(t, env, certGVK, ns, "small")
	if err := timedOut(ctx); err != nil {
		t.Errorf("while the other became Ready: %v", err)
	}
}
