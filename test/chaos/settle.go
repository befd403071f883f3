package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/test/framework/kubeops"
)

// resync makes the model what the API server holds: a write whose answer
// was lost to a dying API server may have been applied or not. A resource
// being deleted counts as deleted. Only the harness writes the custom
// resources, so this hides nothing the operator did.
func (w *workload) resync(ctx context.Context, timeout time.Duration) error {
	for _, s := range w.slots {
		err := kubeops.WaitFor(ctx, timeout, "reading "+s.key.String(), func(ctx context.Context) (bool, error) {
			u, err := w.client(s).Get(ctx, s.key.Name, metav1.GetOptions{})
			if isNotFound(err) {
				w.set(s, false, s.spec)
				return true, nil
			}
			if err != nil {
				return false, nil // retried until timeout
			}
			var sp spec
			b, err := json.Marshal(u.Object["spec"])
			if err == nil {
				err = json.Unmarshal(b, &sp)
			}
			if err != nil {
				return false, fmt.Errorf("spec of %s: %w", s.key, err)
			}
			w.set(s, u.GetDeletionTimestamp() == nil, sp)
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (w *workload) set(s *slot, live bool, sp spec) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s.live, s.spec = live, sp
}

// settled checks what the faults left, with no spec changed since: every
// live resource converged to its spec, or, if its spec cannot be released
// (the churn's failing updates), settled with a condition saying why;
// deleted ones gone; nothing pending; history within maxHistory; kept
// objects kept; nothing leaked.
func (v *verifier) settled(ctx context.Context) ([]Problem, error) {
	v.explainBad = true
	defer func() { v.explainBad = false }()
	return v.check(ctx)
}

// settle waits for the state the faults left to settle, and returns what is
// still wrong after timeout, each problem marked as found then, and when
// the set of subjects with a problem last changed (when all that did
// settle had settled).
func settle(ctx context.Context, w *workload, v *verifier, timeout time.Duration) ([]Problem, time.Time, error) {
	lastChange, last := time.Now(), "?"
	if err := w.resync(ctx, 2*time.Minute); err != nil {
		return nil, lastChange, err
	}
	ps, err := until(ctx, timeout, func(ctx context.Context) ([]Problem, error) {
		ps, err := v.settled(ctx)
		if err == nil {
			if key := subjectKey(ps); key != last {
				last, lastChange = key, time.Now()
			}
		}
		return ps, err
	})
	for i := range ps {
		ps[i].What = "after the faults: " + ps[i].What
	}
	return ps, lastChange, err
}

// subjectKey names the set of subjects of ps.
func subjectKey(ps []Problem) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range ps {
		if !seen[p.Subject] {
			seen[p.Subject] = true
			out = append(out, p.Subject)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}
