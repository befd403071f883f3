package watches

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
)

func TestLoadHelmOperatorFileUnchanged(t *testing.T) {
	t.Setenv("TEST_IMAGE_TAG", "1.6.9")
	ws, err := Load(filepath.Join("testdata", "helm-operator-watches.yaml"))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(ws) != 2 {
		t.Fatalf("got %d watches, want 2", len(ws))
	}
	m := ws[0]
	if got := m.String(); got != "cache.example.com/v1alpha1, Kind=Memcached" {
		t.Errorf("GVK = %s", got)
	}
	if m.Chart == nil || m.Chart.Metadata.Name != "testchart" {
		t.Errorf("chart not loaded: %+v", m.Chart)
	}
	if m.WatchesDependents() {
		t.Error("watchDependentResources: false was not honoured")
	}
	if m.Period() != 2*time.Minute || m.Concurrency() != 4 {
		t.Errorf("period %s, concurrency %d", m.Period(), m.Concurrency())
	}
	wantOverrides := map[string]string{"image.repository": "quay.io/example/memcached", "image.tag": "1.6.9", "replicas": "3"}
	for k, v := range wantOverrides {
		if m.OverrideValues[k] != v {
			t.Errorf("overrideValues[%s] = %q, want %q", k, m.OverrideValues[k], v)
		}
	}
	if !m.LabelSelector.Matches(labels.Set{"tier": "cache"}) || m.LabelSelector.Matches(labels.Set{"tier": "web"}) {
		t.Errorf("selector %s does not select tier=cache only", m.LabelSelector)
	}

	p := ws[1]
	if p.Group != "" || !p.WatchesDependents() || p.Period() != 0 || p.Concurrency() != DefaultMaxConcurrentReconciles {
		t.Errorf("defaults not applied: %+v", p)
	}
	if !p.LabelSelector.Empty() {
		t.Errorf("no selector should select everything, got %s", p.LabelSelector)
	}
	if !filepath.IsAbs(p.ResolvedChartPath) && !strings.HasPrefix(p.ResolvedChartPath, "testdata") {
		t.Errorf("chart path not resolved against the file: %s", p.ResolvedChartPath)
	}
}

func TestParseErrorsNameEntryAndField(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // every fragment must appear in the error
	}{
		{"not yaml", "- group: [", []string{"not valid YAML"}},
		{"not a list", "group: a\nkind: B", []string{"top level must be a list"}},
		{"empty", "", []string{"no watch entries"}},
		{"entry not a map", "- just-a-string", []string{"entry 0", "mapping"}},
		{"unknown field", "- version: v1\n  kind: Foo\n  chrt: chart", []string{`entry 0 (kind "Foo")`, `unknown field "chrt"`}},
		{"wrong type", "- version: v1\n  kind: Foo\n  chart: chart\n  maxConcurrentReconciles: many", []string{`entry 0 (kind "Foo")`, "maxConcurrentReconciles", "integer"}},
		{"missing version and kind", "- chart: chart", []string{`entry 0: field "version": must be set`, `entry 0: field "kind": must be set`}},
		{"bad kind", "- version: v1\n  kind: foo-bar\n  chart: chart", []string{`field "kind"`, "upper-case"}},
		{"bad group", "- group: Not_A_Group\n  version: v1\n  kind: Foo\n  chart: chart", []string{`field "group"`}},
		{"bad version", "- version: V1.0\n  kind: Foo\n  chart: chart", []string{`field "version"`}},
		{"missing chart", "- version: v1\n  kind: Foo\n  chart: nowhere", []string{`entry 0 (kind "Foo"): field "chart": cannot load chart "nowhere"`}},
		{"negative period", "- version: v1\n  kind: Foo\n  chart: chart\n  reconcilePeriod: -1s", []string{`field "reconcilePeriod"`}},
		{"bad period", "- version: v1\n  kind: Foo\n  chart: chart\n  reconcilePeriod: soon", []string{"entry 0", "soon"}},
		{"zero concurrency", "- version: v1\n  kind: Foo\n  chart: chart\n  maxConcurrentReconciles: 0", []string{`field "maxConcurrentReconciles": must be at least 1`}},
		{"bad selector", "- version: v1\n  kind: Foo\n  chart: chart\n  selector:\n    matchExpressions:\n    - {key: a, operator: Nope}", []string{`field "selector"`}},
		{"bad template", "- version: v1\n  kind: Foo\n  chart: chart\n  overrideValues:\n    x: '{{ nope }}'", []string{`field "overrideValues"`, `key "x"`}},
		{"duplicate", "- version: v1\n  kind: Foo\n  chart: chart\n- version: v1\n  kind: Foo\n  chart: chart", []string{`entry 1 (kind "Foo")`, "already watched by entry 0"}},
		{"negative history", "- version: v1\n  kind: Foo\n  chart: chart\n  maxHistory: -1", []string{`field "maxHistory"`}},
		{"negative retries", "- version: v1\n  kind: Foo\n  chart: chart\n  remediation: {retries: -2}", []string{`field "remediation.retries"`}},
		{"negative maxInFlight", "- version: v1\n  kind: Foo\n  chart: chart\n  remediation: {maxInFlight: -1}", []string{`field "remediation.maxInFlight"`}},
		{"bad strategy", "- version: v1\n  kind: Foo\n  chart: chart\n  remediation: {strategy: pray}", []string{`field "remediation.strategy"`, "pray"}},
		{"bad backoff", "- version: v1\n  kind: Foo\n  chart: chart\n  remediation: {backoff: {initial: 1m, max: 1s}}", []string{`field "remediation.backoff"`}},
		{"zero timeout", "- version: v1\n  kind: Foo\n  chart: chart\n  timeout: 0s", []string{`field "timeout"`, "positive duration"}},
		{"negative timeout", "- version: v1\n  kind: Foo\n  chart: chart\n  timeout: -5s", []string{`field "timeout"`, "positive duration"}},
		{"zero readiness timeout", "- version: v1\n  kind: Foo\n  chart: chart\n  readiness: {timeout: 0s}", []string{`field "readiness.timeout"`}},
		{"expression without kind", "- version: v1\n  kind: Foo\n  chart: chart\n  readiness: {expressions: [{apiVersion: x.io/v1, current: 'true'}]}", []string{`field "readiness.expressions[0]"`, "apiVersion and kind are required"}},
		{"expression bad apiVersion", "- version: v1\n  kind: Foo\n  chart: chart\n  readiness: {expressions: [{apiVersion: a/b/c, kind: W, current: 'true'}]}", []string{`field "readiness.expressions[0].apiVersion"`}},
		{"expression without current", "- version: v1\n  kind: Foo\n  chart: chart\n  readiness: {expressions: [{apiVersion: x.io/v1, kind: W, failed: 'true'}]}", []string{`field "readiness.expressions[0]"`, "current: an expression is required"}},
		{"expression does not compile", "- version: v1\n  kind: Foo\n  chart: chart\n  readiness: {expressions: [{apiVersion: x.io/v1, kind: W, current: 'true', failed: 'status.phase =='}]}", []string{`field "readiness.expressions[0]"`, "failed: "}},
		{"expression not boolean", "- version: v1\n  kind: Foo\n  chart: chart\n  readiness: {expressions: [{apiVersion: x.io/v1, kind: W, current: \"'yes'\"}]}", []string{`field "readiness.expressions[0]"`, "must be a boolean expression"}},
		{"expression kind twice", "- version: v1\n  kind: Foo\n  chart: chart\n  readiness: {expressions: [{apiVersion: x.io/v1, kind: W, current: 'true'}, {apiVersion: x.io/v2, kind: W, current: 'false'}]}", []string{`field "readiness.expressions[1]"`, "already has expressions (entry 0)"}},
		{"bad approval", "- version: v1\n  kind: Foo\n  chart: chart\n  upgrade: {approval: later}", []string{`field "upgrade.approval"`, `"later" is not an approval`, `"auto"`, `"manual"`}},
		{"bad release name template", "- version: v1\n  kind: Foo\n  chart: chart\n  releaseName: '{{ .Name '", []string{`field "releaseName"`}},
		{"unknown nested field", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {corect: false}", []string{`unknown field "corect"`}},
		{"bad drift mode", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {mode: fix}", []string{`field "drift.mode"`, `"fix" is not a drift mode`}},
		{"drift correct contradicts mode", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {mode: warn, correct: true}", []string{`field "drift.correct"`, "contradicts mode: warn"}},
		{"drift correct false with mode correct", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {mode: correct, correct: false}", []string{`field "drift.correct"`}},
		{"drift ignore not a pointer", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {ignore: [{paths: [spec.replicas]}]}", []string{`field "drift.ignore[0].paths[0]"`, "JSON pointer"}},
		{"drift ignore bad escape", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {ignore: [{paths: [/a, /metadata/annotations/a~2b]}]}", []string{`field "drift.ignore[0].paths[1]"`}},
		{"drift ignore without paths", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {ignore: [{target: {kind: Deployment}}]}", []string{`field "drift.ignore[0].paths"`}},
		{"drift ignore unknown target field", "- version: v1\n  kind: Foo\n  chart: chart\n  drift: {ignore: [{paths: [/a], target: {knd: Deployment}}]}", []string{`unknown field "knd"`}},
		{"bad scope namespace", "- version: v1\n  kind: Foo\n  chart: chart\n  scope: {namespaces: [Not_A_Namespace]}", []string{`field "scope.namespaces"`, "Not_A_Namespace"}},
		{"bad storage", "- version: v1\n  kind: Foo\n  chart: chart\n  storage: configmap", []string{`field "storage"`, `"configmap" is not a release storage`, `"secret"`, `"chunked"`}},
		{"storage not a string", "- version: v1\n  kind: Foo\n  chart: chart\n  storage: [chunked]", []string{`entry 0 (kind "Foo")`, "storage"}},
		{"test timeout not positive", "- version: v1\n  kind: Foo\n  chart: chart\n  test: {enable: true, timeout: 0s}", []string{`field "test.timeout"`, "must be a positive duration, got 0s"}},
		{"test timeout not a duration", "- version: v1\n  kind: Foo\n  chart: chart\n  test: {timeout: soon}", []string{`entry 0 (kind "Foo")`, "soon"}},
		{"test onFailure unknown", "- version: v1\n  kind: Foo\n  chart: chart\n  test: {enable: true, onFailure: rollback}", []string{`field "test.onFailure"`, `"rollback" is not a test failure policy`, `"remediate"`, `"report"`}},
		{"test enable not a boolean", "- version: v1\n  kind: Foo\n  chart: chart\n  test: {enable: yes please}", []string{`entry 0 (kind "Foo")`, "test.enable", "true or false"}},
		{"test unknown field", "- version: v1\n  kind: Foo\n  chart: chart\n  test: {enabled: true}", []string{`entry 0 (kind "Foo")`, `unknown field "enabled"`}},
		{"second entry bad", "- version: v1\n  kind: Foo\n  chart: chart\n- version: v1\n  kind: Bar", []string{`entry 1 (kind "Bar"): field "chart": must be set`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "testdata")
			if err == nil {
				t.Fatal("expected an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestParseCollectsEveryProblem(t *testing.T) {
	_, err := Parse([]byte("- kind: Foo\n  chart: chart\n- version: v1\n  kind: Bar\n  chart: missing"), "testdata")
	var fes []*FieldError
	for _, e := range unwrapAll(err) {
		var fe *FieldError
		if errors.As(e, &fe) {
			fes = append(fes, fe)
		}
	}
	if len(fes) != 2 || fes[0].Index != 0 || fes[0].Field != "version" || fes[1].Index != 1 || fes[1].Field != "chart" {
		t.Fatalf("want two field errors (entry 0 version, entry 1 chart), got %v", err)
	}
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestPolicyDefaultsAndOverrides(t *testing.T) {
	ws, err := Parse([]byte(`- version: v1
  kind: Plain
  chart: chart
- version: v1
  kind: Tuned
  chart: chart
  maxHistory: 3
  timeout: 20s
  releaseName: "tuned-{{ .Name }}"
  releaseNamespace: shared
  remediation: {retries: 0, strategy: uninstall, keepFailedInstall: true, backoff: {initial: 1s, max: 4s}}
  readiness: {wait: false, timeout: 1m}
  drift: {correct: false}
  uninstall: {wait: false, timeout: 30s}
`), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	def := ws[0].Policy
	if def.MaxHistory != DefaultMaxHistory || def.Retries != DefaultRetries || def.UpgradeStrategy != StrategyRollback ||
		!def.Wait || def.ReadinessTimeout != DefaultReadinessTimeout || def.DriftMode != DriftCorrect || !def.UninstallWait || def.Timeout != DefaultTimeout {
		t.Errorf("defaults: %+v", def)
	}
	p := ws[1].Policy
	if p.MaxHistory != 3 || p.Retries != 0 || p.UpgradeStrategy != StrategyUninstall || !p.KeepFailedInstall ||
		p.BackoffInitial != time.Second || p.BackoffMax != 4*time.Second || p.Wait || p.ReadinessTimeout != time.Minute ||
		p.DriftMode != DriftDisabled || p.UninstallWait || p.UninstallTimeout != 30*time.Second || p.Timeout != 20*time.Second {
		t.Errorf("overrides: %+v", p)
	}
	ref, err := ws[1].Release("db", "team-a")
	if err != nil || ref.Name != "tuned-db" || ref.Namespace != "shared" {
		t.Errorf("release ref %+v %v", ref, err)
	}
	ref, err = ws[0].Release("db", "team-a")
	if err != nil || ref.Name != "db" || ref.Namespace != "team-a" {
		t.Errorf("default release ref %+v %v", ref, err)
	}
	if _, err := ws[0].Release(strings.Repeat("x", 54), "ns"); err == nil || !strings.Contains(err.Error(), "53") {
		t.Errorf("a too long release name: %v", err)
	}
	if _, err := ws[0].Release("cluster-scoped", ""); err == nil {
		t.Error("an empty release namespace is not an error")
	}
}

func TestChartTestsLoad(t *testing.T) {
	tests := []struct {
		name, field string
		want        TestPolicy
	}{
		{"unset: off", "", TestPolicy{Timeout: 20 * time.Second, OnFailure: TestRemediate}},
		{"enabled: the watch's timeout, remediate", "  test: {enable: true}\n", TestPolicy{Enable: true, Timeout: 20 * time.Second, OnFailure: TestRemediate}},
		{"its own timeout, report", "  test: {enable: true, timeout: 2m, onFailure: report}\n", TestPolicy{Enable: true, Timeout: 2 * time.Minute, OnFailure: TestReport}},
		{"settings kept while off", "  test: {enable: false, onFailure: report}\n", TestPolicy{Timeout: 20 * time.Second, OnFailure: TestReport}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := Parse([]byte("- version: v1\n  kind: Foo\n  chart: chart\n  timeout: 20s\n"+tt.field), "testdata")
			if err != nil {
				t.Fatal(err)
			}
			if got := ws[0].Policy.Test; got != tt.want {
				t.Errorf("Policy.Test = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestStorageLoads(t *testing.T) {
	tests := []struct {
		name, field, want string
	}{
		{"unset is secret", "", StorageSecret},
		{"secret", "  storage: secret\n", StorageSecret},
		{"chunked", "  storage: chunked\n", StorageChunked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, _ := parseOneField(t, tt.field)
			if got := w.ReleaseStorage(); got != tt.want {
				t.Errorf("ReleaseStorage() = %q, want %q", got, tt.want)
			}
		})
	}
}
