package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
)

// failOnPurpose gives up to a quarter of the live custom resources (one at
// least) a spec whose upgrade fails, and returns them. The spec is one the
// API server rejects, so no retry can succeed: the operator must end in a
// settled, explained failure.
func failOnPurpose(ctx context.Context, w *workload, r *rand.Rand, maxCM int) ([]slot, error) {
	var out []slot
	for _, s := range w.slots {
		if !s.live || len(out) > 0 && len(out) >= w.liveCount()/4 {
			continue
		}
		bad := w.next(r, maxCM)
		bad.Port = badPort
		if err := w.patch(ctx, s, bad, "explained failure"); err != nil {
			return out, err
		}
		out = append(out, *s)
	}
	return out, nil
}

// checkExplained: a custom resource whose spec cannot be released is not
// left pending, and its status says why for its current generation: not
// Ready, with a condition whose message names what was rejected.
func (v *verifier) checkExplained(ctx context.Context, s slot) ([]string, error) {
	u, err := v.w.client(&s).Get(ctx, s.key.Name, metav1.GetOptions{})
	if err != nil {
		return []string{"custom resource: " + err.Error()}, nil
	}
	st, err := api.StatusOf(u)
	if err != nil {
		return []string{"unreadable status: " + err.Error()}, nil
	}
	var ps []string
	if st.ObservedGeneration != u.GetGeneration() {
		ps = append(ps, fmt.Sprintf("status is for generation %d, not %d", st.ObservedGeneration, u.GetGeneration()))
	}
	if r := meta.FindStatusCondition(st.Conditions, api.ConditionReady); r == nil || r.Status != metav1.ConditionFalse {
		ps = append(ps, "a spec that cannot be released, and not Ready=False: "+describe(st.Conditions))
	}
	why := strconv.Itoa(badPort)
	explained := false
	for _, c := range st.Conditions {
		explained = explained || strings.Contains(c.Message, why)
	}
	if !explained {
		ps = append(ps, fmt.Sprintf("no condition names the rejected port %s: %s", why, describe(st.Conditions)))
	}
	h, err := v.history(ctx, s.key)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(h.LatestStatus, "pending") || h.LatestStatus == "uninstalling" {
		ps = append(ps, fmt.Sprintf("latest revision %d left %s", h.Latest, h.LatestStatus))
	}
	if v.maxHistory > 0 && h.Revisions > v.maxHistory {
		ps = append(ps, fmt.Sprintf("%d revisions stored, maxHistory is %d", h.Revisions, v.maxHistory))
	}
	return ps, nil
}

// waitExplained checks the failing resources until each is explained or
// timeout passes, and returns what is still unexplained.
func waitExplained(ctx context.Context, v *verifier, failing []slot, timeout time.Duration) ([]Problem, error) {
	return until(ctx, timeout, func(ctx context.Context) ([]Problem, error) {
		var out []Problem
		for _, s := range failing {
			ps, err := v.checkExplained(ctx, s)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				out = append(out, Problem{Subject: s.key.String(), What: p})
			}
		}
		return out, nil
	})
}
