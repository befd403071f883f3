package release

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chartutil"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// fakeSources serves valuesFrom objects from memory and records what each
// resource uses.
type fakeSources struct {
	objs map[watches.SourceObject]map[string][]byte
	err  error // every Read fails with it
	used map[Resource][]watches.SourceObject
}

func (f *fakeSources) Use(r Resource, objs []watches.SourceObject) {
	if len(objs) == 0 {
		delete(f.used, r)
		return
	}
	f.used[r] = objs
}

func (f *fakeSources) Read(_ context.Context, obj watches.SourceObject) (map[string][]byte, bool, error) {
	if f.err != nil {
		return nil, false, f.err
	}
	d, ok := f.objs[obj]
	return d, ok, nil
}

var (
	defaultsCM = watches.SourceObject{Kind: watches.SourceConfigMap, Namespace: "ns", Name: "defaults"}
	appSecret  = watches.SourceObject{Kind: watches.SourceSecret, Namespace: "ns", Name: "app-values"}
)

// newSourcedMachine is a machine whose watch takes values from an
// optional ConfigMap "defaults" (values.yaml) and from the Secret
// "<name>-values" (key "data", set at "data"), under a spec without data.
func newSourcedMachine(t *testing.T) (*machine, *fakeSources) {
	t.Helper()
	src := &fakeSources{objs: map[watches.SourceObject]map[string][]byte{}, used: map[Resource][]watches.SourceObject{}}
	m := newMachine(t, nil, WithValuesSources(src))
	m.target.Watch.ValuesFrom = []watches.ValuesReference{
		{Kind: watches.SourceConfigMap, Name: "defaults", Optional: true},
		{Kind: watches.SourceSecret, Name: "{{ .Name }}-values", ValuesKey: "data", TargetPath: "data"},
	}
	m.setValues(map[string]any{})
	return m, src
}

// releasedData is the data value of the latest revision.
func (m *machine) releasedData() any {
	rel, err := m.store.Last("app")
	if err != nil {
		m.t.Fatal(err)
	}
	return rel.Config["data"]
}

func TestMachineValuesFrom(t *testing.T) {
	m, src := newSourcedMachine(t)

	// The Secret is missing: nothing is installed; the step waits.
	expectTrace(t, m.run(3), "Waiting")
	if c := m.cond(api.ConditionReady); c.Status != metav1.ConditionFalse || c.Reason != string(api.ReasonValuesSourceMissing) ||
		!strings.Contains(c.Message, `Secret ns/app-values not found (key "data")`) {
		t.Errorf("Ready %+v", c)
	}
	if c := m.cond(api.ConditionReconciling); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonValuesSourceMissing) {
		t.Errorf("Reconciling %+v: a missing source heals, it is not Stalled", c)
	}
	if c := m.cond(api.ConditionReleased); c.Reason != string(api.ReasonValuesSourceMissing) {
		t.Errorf("Released %+v", c)
	}
	if evs := m.events.take(); len(evs) != 1 || evs[0] != "Warning ValuesSourceMissing" {
		t.Errorf("events %v, want one ValuesSourceMissing", evs)
	}
	if m.st.NextAttemptTime == nil || !m.st.NextAttemptTime.Time.Equal(t0.Add(10*time.Second)) || m.st.BackoffOf != phaseValuesFrom {
		t.Errorf("backoff %s %v", m.st.BackoffOf, m.st.NextAttemptTime)
	}
	if got := src.used[resourceOf(m.obj)]; len(got) != 2 || got[0] != defaultsCM || got[1] != appSecret {
		t.Errorf("used %v, want the ConfigMap and the Secret", got)
	}
	// Looked at again within the backoff: no new Event; after it, again.
	expectTrace(t, m.run(3), "Waiting")
	if evs := m.events.take(); len(evs) != 0 {
		t.Errorf("events within the backoff: %v", evs)
	}
	m.clock.Step(10 * time.Second)
	res, err := m.engine.Step(context.Background(), m.target, m.obj, &m.st)
	if err != nil || res.Requeue != 20*time.Second {
		t.Errorf("the second wait: requeue %s (%v), want the doubled backoff", res.Requeue, err)
	}
	m.events.take()

	// The Secret appears: installed with its value, the backoff gone.
	src.objs[appSecret] = map[string][]byte{"data": []byte("from-secret")}
	expectTrace(t, m.run(5), "Absent/Install", "InSync")
	if got := m.releasedData(); got != "from-secret" {
		t.Errorf("released data %v", got)
	}
	if m.st.BackoffOf != "" || m.st.NextAttemptTime != nil {
		t.Errorf("backoff left: %s %v", m.st.BackoffOf, m.st.NextAttemptTime)
	}

	// Its change upgrades the release.
	src.objs[appSecret] = map[string][]byte{"data": []byte("from-secret-2")}
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")

	// The ConfigMap comes under the spec and the Secret: the Secret, listed
	// later, wins; with data in the spec, the spec wins.
	src.objs[defaultsCM] = map[string][]byte{"values.yaml": []byte("data: from-configmap\nextra: x\n")}
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
	if got := m.releasedData(); got != "from-secret-2" {
		t.Errorf("released data %v, want the Secret's (listed after the ConfigMap)", got)
	}
	m.setValues(map[string]any{"data": "from-spec"})
	expectTrace(t, m.run(5), "OutOfSync/Upgrade", "InSync")
	if got := m.releasedData(); got != "from-spec" {
		t.Errorf("released data %v, want the spec's", got)
	}

	// The resource is deleted: it uses nothing any more.
	m.obj.SetDeletionTimestamp(&metav1.Time{Time: t0})
	m.target.Watch.Policy.UninstallWait = false
	m.run(3)
	if _, ok := src.used[resourceOf(m.obj)]; ok {
		t.Errorf("a deleted resource still uses %v", src.used)
	}
}

// A Secret's value quoted by a failing action is redacted in conditions,
// the failure message and Events' notes, though no schema marks it.
func TestMachineValuesFromSecretIsRedacted(t *testing.T) {
	m, src := newSourcedMachine(t)
	src.objs[appSecret] = map[string][]byte{"data": []byte("fail-me")} // the fake kube client quotes it in its error
	expectTrace(t, m.run(5), "Absent/Install!", "Failed/Uninstall", "Absent")
	for _, c := range m.st.Conditions {
		if strings.Contains(c.Message, "fail-me") {
			t.Errorf("condition %s quotes the Secret's value: %s", c.Type, c.Message)
		}
	}
	if !strings.Contains(m.st.LastFailureMessage, "[redacted]") || strings.Contains(m.st.LastFailureMessage, "fail-me") {
		t.Errorf("last failure %q", m.st.LastFailureMessage)
	}
}

func TestMachineValuesFromErrors(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(*fakeSources)
		want   string // the trace
		reason api.Reason
		msg    string
		hidden string // not in any message
		errs   bool   // the step fails as a whole
	}{
		{name: "the key missing", setup: func(f *fakeSources) { f.objs[appSecret] = map[string][]byte{"other": []byte("x")} },
			want: "Waiting", reason: api.ReasonValuesSourceMissing, msg: `Secret ns/app-values has no key "data"`},
		{name: "not allowed to read", setup: func(f *fakeSources) {
			f.err = apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "app-values", errors.New("RBAC"))
		}, want: "Waiting", reason: api.ReasonForbidden, msg: "ConfigMap ns/defaults cannot be read: secrets \"app-values\" is forbidden"},
		{name: "a transient read error retries the step", setup: func(f *fakeSources) { f.err = apierrors.NewServiceUnavailable("busy") },
			errs: true},
		{name: "a ConfigMap that is not YAML says why", setup: func(f *fakeSources) {
			f.objs[appSecret] = map[string][]byte{"data": []byte("x")}
			f.objs[defaultsCM] = map[string][]byte{"values.yaml": []byte("a: [b\n")}
		}, want: "Stalled", reason: api.ReasonInvalidValues, msg: `ConfigMap ns/defaults key "values.yaml" does not hold a YAML mapping of values: error converting YAML to JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, src := newSourcedMachine(t)
			tt.setup(src)
			got, err := m.try()
			if (err != nil) != tt.errs {
				t.Fatalf("step error %v, want one: %v", err, tt.errs)
			}
			if tt.errs {
				return
			}
			if got != tt.want {
				t.Errorf("step %s, want %s", got, tt.want)
			}
			if c := m.cond(api.ConditionReady); c.Reason != string(tt.reason) || !strings.Contains(c.Message, tt.msg) {
				t.Errorf("Ready %s %q, want %s saying %q", c.Reason, c.Message, tt.reason, tt.msg)
			}
		})
	}
}

// A Secret's values document that does not parse is named without its
// content (a YAML parser's message may quote it).
func TestValuesFromSecretParseErrorQuotesNothing(t *testing.T) {
	f := &fromSources{}
	src := watches.ValuesSource{Object: appSecret, ValuesKey: "values.yaml"}
	err := f.add(src, []byte("password: hunter2-secret\n  bad: [indent"))
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "not valid YAML (line") {
		t.Errorf("error %v", err)
	}
	f = &fromSources{values: map[string]any{}}
	if err := f.add(src, []byte("auth:\n  password: hunter2-secret\n  port: 5432\n")); err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.secrets, ",") != "hunter2-secret,5432" {
		t.Errorf("secrets %q, want the Secret's strings and numbers long enough to hide", f.secrets)
	}
}

// secretsIn finds, in an earlier revision's values, what is where the
// Secrets of valuesFrom put their values now (a targetPath, or a whole
// document's leaves), and nothing else.
func TestValuesFromSecretsIn(t *testing.T) {
	f := fromSources{values: chartutil.Values{}}
	for _, src := range []struct {
		src watches.ValuesSource
		raw string
	}{
		{watches.ValuesSource{Object: watches.SourceObject{Kind: watches.SourceSecret, Name: "s"}, TargetPath: "db.user"}, "new-user-0002"},
		{watches.ValuesSource{Object: watches.SourceObject{Kind: watches.SourceSecret, Name: "s"}, TargetPath: "hosts[1]"}, "new-host-0002"},
		{watches.ValuesSource{Object: watches.SourceObject{Kind: watches.SourceSecret, Name: "s"}}, "auth:\n  token: new-token-0002\n"},
		{watches.ValuesSource{Object: watches.SourceObject{Kind: watches.SourceConfigMap, Name: "c"}, TargetPath: "db.host"}, "db.example"},
	} {
		if err := f.add(src.src, []byte(src.raw)); err != nil {
			t.Fatal(err)
		}
	}
	old := map[string]any{
		"db":    map[string]any{"user": "old-user-0001", "host": "old-host.example"},
		"hosts": []any{"public-host-0", "old-host-0001"},
		"auth":  map[string]any{"token": "old-token-0001", "mode": "plain-mode"},
		"other": "plain-value",
	}
	got := f.secretsIn(old)
	slices.Sort(got)
	if want := []string{"old-host-0001", "old-token-0001", "old-user-0001"}; !slices.Equal(got, want) {
		t.Errorf("secretsIn = %v, want %v", got, want)
	}
}
