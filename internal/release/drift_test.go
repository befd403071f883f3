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
