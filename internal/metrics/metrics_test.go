package metrics

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

const (
	releasesHeader = "# HELP chartkeeper_releases Custom resources per kind and release state.\n# TYPE chartkeeper_releases gauge\n"
	actionsName    = "chartkeeper_helm_actions_total"
	durationName   = "chartkeeper_helm_action_duration_seconds"
	releasesName   = "chartkeeper_releases"
)

func TestStateTracker(t *testing.T) {
	type op struct {
		del              bool
		key, kind, state string
	}
	tests := []struct {
		name string
		ops  []op
		want string // series after the ops, without the header ("" for none)
	}{
		{name: "nothing recorded", want: ""},
		{name: "one resource", ops: []op{{key: "uid-1", kind: "WebApp", state: "InSync"}},
			want: `chartkeeper_releases{kind="WebApp",state="InSync"} 1`},
		{name: "resources of one kind and state add up", ops: []op{
			{key: "uid-1", kind: "WebApp", state: "InSync"},
			{key: "uid-2", kind: "WebApp", state: "InSync"},
			{key: "uid-3", kind: "WebApp", state: "Failed"},
			{key: "uid-4", kind: "Etcd", state: "InSync"},
		}, want: `chartkeeper_releases{kind="Etcd",state="InSync"} 1
chartkeeper_releases{kind="WebApp",state="Failed"} 1
chartkeeper_releases{kind="WebApp",state="InSync"} 2`},
		{name: "a new state replaces the old one", ops: []op{
			{key: "uid-1", kind: "WebApp", state: "Installing"},
			{key: "uid-2", kind: "WebApp", state: "InSync"},
			{key: "uid-1", kind: "WebApp", state: "InSync"},
		}, want: `chartkeeper_releases{kind="WebApp",state="InSync"} 2`},
		{name: "delete forgets one resource", ops: []op{
			{key: "uid-1", kind: "WebApp", state: "InSync"},
			{key: "uid-2", kind: "WebApp", state: "InSync"},
			{del: true, key: "uid-1"},
		}, want: `chartkeeper_releases{kind="WebApp",state="InSync"} 1`},
		{name: "deleting the last resource of a state drops its series", ops: []op{
			{key: "uid-1", kind: "WebApp", state: "Failed"},
			{key: "uid-2", kind: "WebApp", state: "InSync"},
			{del: true, key: "uid-1"},
		}, want: `chartkeeper_releases{kind="WebApp",state="InSync"} 1`},
		{name: "deleting an unknown resource is a no-op", ops: []op{
			{key: "uid-1", kind: "WebApp", state: "InSync"},
			{del: true, key: "uid-9"},
		}, want: `chartkeeper_releases{kind="WebApp",state="InSync"} 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStateTracker()
			for _, o := range tc.ops {
				if o.del {
					s.Delete(o.key)
				} else {
					s.Set(o.key, o.kind, o.state)
				}
			}
			want := ""
			if tc.want != "" {
				want = releasesHeader + tc.want + "\n"
			}
			if err := testutil.CollectAndCompare(s, strings.NewReader(want), releasesName); err != nil {
				t.Error(err)
			}
			if n, wantN := testutil.CollectAndCount(s, releasesName), strings.Count(tc.want, "chartkeeper_releases{"); n != wantN {
				t.Errorf("%d series, want %d", n, wantN)
			}
		})
	}
}

func TestObserveAction(t *testing.T) {
	tests := []struct {
		name       string
		action     string
		err        error
		took       time.Duration
		wantResult string
		wantBucket float64 // smallest bucket the observation falls in
	}{
		{name: "success", action: "install", took: 300 * time.Millisecond, wantResult: "success", wantBucket: 0.5},
		{name: "failure", action: "upgrade", err: errors.New("boom"), took: 2 * time.Second, wantResult: "failure", wantBucket: 2.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			actions.Reset()
			actionDuration.Reset()
			ObserveAction(tc.action, tc.err, tc.took)
			ObserveAction(tc.action, tc.err, tc.took)

			if got := testutil.ToFloat64(actions.WithLabelValues(tc.action, tc.wantResult)); got != 2 {
				t.Errorf("%s{action=%q,result=%q} = %v, want 2", actionsName, tc.action, tc.wantResult, got)
			}
			if n := testutil.CollectAndCount(actions, actionsName); n != 1 {
				t.Errorf("%s has %d series, want 1 (only result %q)", actionsName, n, tc.wantResult)
			}
			if n := testutil.CollectAndCount(actionDuration, durationName); n != 1 {
				t.Errorf("%s has %d series, want 1", durationName, n)
			}
			if err := testutil.CollectAndCompare(actionDuration, strings.NewReader(histogram(tc.action, tc.wantResult, tc.wantBucket, 2, 2*tc.took.Seconds())), durationName); err != nil {
				t.Error(err)
			}
		})
	}
}

// histogram is the exposition of one series of the action-duration
// histogram holding n observations summing to sum, all in the bucket le and
// above.
func histogram(action, result string, le float64, n int, sum float64) string {
	var b strings.Builder
	b.WriteString("# HELP chartkeeper_helm_action_duration_seconds Duration of Helm actions, by action and result.\n")
	b.WriteString("# TYPE chartkeeper_helm_action_duration_seconds histogram\n")
	labels := `action="` + action + `",result="` + result + `"`
	for _, bound := range []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60} {
		c := 0
		if bound >= le {
			c = n
		}
		b.WriteString(durationName + "_bucket{" + labels + `,le="` + strconv.FormatFloat(bound, 'g', -1, 64) + `"} ` + strconv.Itoa(c) + "\n")
	}
	b.WriteString(durationName + "_bucket{" + labels + `,le="+Inf"} ` + strconv.Itoa(n) + "\n")
	b.WriteString(durationName + "_sum{" + labels + "} " + strconv.FormatFloat(sum, 'g', -1, 64) + "\n")
	b.WriteString(durationName + "_count{" + labels + "} " + strconv.Itoa(n) + "\n")
	return b.String()
}

func TestRegistered(t *testing.T) {
	ObserveAction("rollback", nil, time.Millisecond)
	key := "registered-test-uid"
	States.Set(key, "WebApp", "InSync")
	t.Cleanup(func() { States.Delete(key) })
	for _, name := range []string{actionsName, durationName, releasesName} {
		n, err := testutil.GatherAndCount(crmetrics.Registry, name)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Errorf("%s is not served by the manager's registry", name)
		}
	}
}
