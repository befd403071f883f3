package release

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A cache that has not caught up with a write shows a mark before the
// write's; anything else (the same, later, or not comparable) is not.
func TestMarkBefore(t *testing.T) {
	gen := func(g int64) mark { return markOf(&metav1.ObjectMeta{Generation: g, ResourceVersion: "99"}) }
	rv := func(v string) mark { return markOf(&metav1.ObjectMeta{ResourceVersion: v}) }
	tests := []struct {
		name string
		m, n mark
		want bool
	}{
		{"older generation", gen(2), gen(3), true},
		{"same generation", gen(3), gen(3), false},
		{"later generation", gen(4), gen(3), false},
		{"older resourceVersion", rv("9"), rv("10"), true},
		{"same resourceVersion", rv("10"), rv("10"), false},
		{"later resourceVersion", rv("11"), rv("10"), false},
		{"resourceVersions not numbers", rv("a"), rv("b"), false},
		{"generation against resourceVersion", gen(1), rv("10"), false},
		{"resourceVersion against generation", rv("1"), gen(2), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.before(tt.n); got != tt.want {
				t.Errorf("%+v before %+v = %v, want %v", tt.m, tt.n, got, tt.want)
			}
		})
	}
}

// The answers to an action's writes become baselines with nothing drifted,
// except an answer whose generation is more than one past the baseline the
// action started from (someone else's write came in between, unseen): no
// baseline, so the next look checks the object.
func TestTookWrites(t *testing.T) {
	tests := []struct {
		name   string
		before *mark // nil: no baseline
		answer metav1.ObjectMeta
		want   *mark // nil: no baseline after
	}{
		{"created", nil, metav1.ObjectMeta{UID: "u", Generation: 1}, &mark{generation: 1}},
		{"patched", &mark{generation: 3}, metav1.ObjectMeta{UID: "u", Generation: 4}, &mark{generation: 4}},
		{"metadata patched", &mark{generation: 3}, metav1.ObjectMeta{UID: "u", Generation: 3}, &mark{generation: 3}},
		{"someone else's edit in between", &mark{generation: 3}, metav1.ObjectMeta{UID: "u", Generation: 5}, nil},
		{"a kind without generation", &mark{version: "10"}, metav1.ObjectMeta{UID: "u", ResourceVersion: "42"}, &mark{version: "42"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDriftTracker()
			if tt.before != nil {
				d.baseline.set("rel", "u", driftBaseline{marker: *tt.before, diffs: []fieldDiff{{}}})
			}
			w := &writes{}
			w.wrote(&tt.answer)
			d.tookWrites("rel", w)
			got, known := d.baseline.get("rel", "u")
			switch {
			case tt.want == nil && known:
				t.Errorf("baseline %+v, want none", got)
			case tt.want != nil && !known:
				t.Errorf("no baseline, want %+v", *tt.want)
			case tt.want != nil && (got.marker != *tt.want || len(got.diffs) != 0):
				t.Errorf("baseline %+v, want %+v with nothing drifted", got, *tt.want)
			}
		})
	}
}
