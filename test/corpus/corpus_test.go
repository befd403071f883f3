package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/internal/crdschema"
	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

const group = "corpus.chartkeeper.dev"

// corpusChart is one chart of the corpus with its generated CRD.
type corpusChart struct {
	name, dir string
	watch     watches.Watch
	crd       *apiextv1.CustomResourceDefinition
	warnings  []crdschema.Warning
}

// charts generates the CRD of every chart in this directory, as
// create-api does.
func charts(t *testing.T) []corpusChart {
	t.Helper()
	dirs, err := filepath.Glob("*/Chart.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no charts in the corpus: %v", err)
	}
	var out []corpusChart
	for _, f := range dirs {
		dir := filepath.Dir(f)
		ch, err := loader.Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		w := watches.Watch{Group: group, Version: "v1alpha1", Kind: strings.ToUpper(dir[:1]) + dir[1:], ChartPath: dir, Chart: ch}
		crd, warns, err := manifests.CRD(w, nil, manifests.CRDOptions{})
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		out = append(out, corpusChart{name: dir, dir: dir, watch: w, crd: crd, warnings: warns})
	}
	return out
}

func (c corpusChart) spec() apiextv1.JSONSchemaProps {
	return c.crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"]
}

// cr wraps values as a custom resource of the chart's kind.
func (c corpusChart) cr(t *testing.T, values []byte) []byte {
	t.Helper()
	var spec any
	if err := yaml.Unmarshal(values, &spec); err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(map[string]any{
		"apiVersion": group + "/v1alpha1", "kind": c.watch.Kind,
		"metadata": map[string]any{"name": "x"}, "spec": spec,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The invariant of schema conversion, over every chart of the corpus: the
// generated CRD accepts the generated sample and every values file the
// chart ships (values.yaml, values-production.yaml, ...), checked as the
// API server checks a create with strict field validation.
func TestGeneratedCRDAcceptsSampleAndShippedValues(t *testing.T) {
	for _, c := range charts(t) {
		t.Run(c.name, func(t *testing.T) {
			sample, err := manifests.Sample(c.watch, c.spec())
			if err != nil {
				t.Fatal(err)
			}
			if err := crdschema.Admit(c.crd, sample); err != nil {
				t.Errorf("the generated CRD refuses the generated sample:\n%v", err)
			}
			files, _ := filepath.Glob(filepath.Join(c.dir, "values*.yaml"))
			if len(files) == 0 {
				t.Fatal("no values files")
			}
			for _, f := range files {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := crdschema.Admit(c.crd, c.cr(t, b)); err != nil {
					t.Errorf("the generated CRD refuses %s:\n%v", filepath.Base(f), err)
				}
			}
		})
	}
}

// What the CRD of each corpus chart takes and refuses: undeclared keys
// where the chart's schema allows them (typed from values.yaml where they
// appear there), declared keys typed and validated.
func TestGeneratedCRDFollowsTheChartsSchema(t *testing.T) {
	byName := map[string]corpusChart{}
	for _, c := range charts(t) {
		byName[c.name] = c
	}
	for _, tc := range []struct {
		chart, what, spec string
		refused           string // "" when accepted; else a part of the error
	}{
		{"kvstore", "a key documented only in values.yaml", "master: {annotations: {team: cache}}\nauth: {acl: {sentinel: true}}", ""},
		{"kvstore", "a key in neither schema nor values.yaml, where the schema allows more keys", "master: {priorityClassName: high}\nnewTopLevel: {a: 1}", ""},
		{"kvstore", "a wrong type on a declared key", "master: {count: two}", "spec.master.count"},
		{"kvstore", "a declared bound", "replica: {replicaCount: -1}", "spec.replica.replicaCount"},
		{"kvstore", "a declared enum", "architecture: cluster", "spec.architecture"},
		{"kvstore", "a wrong type on a key typed from values.yaml", "master: {service: {ports: {redis: high}}}", "spec.master.service.ports.redis"},
		{"kvstore", "a wrong type on a list typed from values.yaml", "master: {extraFlags: --maxmemory}", "spec.master.extraFlags"},
		{"kvstore", "a map the templates pass on whole takes any content", "master: {resources: {limits: {cpu: 1, memory: 1Gi}}}", ""},
		{"sqldb", "a $ref'd definition is typed", "image: {pullPolicy: Sometimes}", "spec.image.pullPolicy"},
		{"sqldb", "a $ref'd definition's additionalProperties: false closes it", "primary: {resources: {claims: []}}", "spec.primary.resources.claims"},
		{"sqldb", "a $ref'd map of quantities takes strings and integers", "primary: {resources: {requests: {cpu: 2, memory: 1Gi}}}", ""},
		{"sqldb", "allOf merges a definition with more properties", "readReplicas: {replicaCount: 17}", "spec.readReplicas.replicaCount"},
		{"sqldb", "allOf keeps the definition's typed properties", "primary: {persistence: {enabled: yes-please}}", "spec.primary.persistence.enabled"},
		{"sqldb", "patternProperties values are typed", "auth: {secretKeys: {adminPasswordKey: 7}}", "spec.auth.secretKeys.adminPasswordKey"},
		{"sqldb", "patternProperties keys are kept", "auth: {secretKeys: {replicationPasswordKey: repl}}\nextraLabels: {tier: db}", ""},
		{"sqldb", "an anyOf of objects keeps either", "backup: {target: {s3: {bucket: dumps}}}", ""},
		{"sqldb", "an anyOf of an enum and null takes null", "tls: {mode: null}", ""},
		{"sqldb", "a declared enum in a nested object", "backup: {cronjob: {concurrencyPolicy: Sometimes}}", "spec.backup.cronjob.concurrencyPolicy"},
		{"sqldb", "a key documented only in values.yaml", "primary: {service: {ports: {postgresql: 5433}}}\nmetrics: {customMetrics: {q: {query: select 1}}}", ""},
		{"ingress-router", "a scalar of a subtree the templates read with hasKey and field by field", "controller: {replicaCount: two}", "spec.controller.replicaCount"},
		{"ingress-router", "a nested scalar of that subtree", "controller: {service: {ports: {http: web}}}", "spec.controller.service.ports.http"},
		{"ingress-router", "the key hasKey asks for, commented out in values.yaml, takes any value", "controller: {replicaCount: 3, maxUnavailable: 50%}", ""},
		{"ingress-router", "maps of that subtree the templates use whole take any content", "controller: {config: {ssl-protocols: TLSv1.3}, resources: {limits: {memory: 1Gi}}, updateStrategy: {type: Recreate}}", ""},
	} {
		t.Run(tc.chart+"/"+tc.what, func(t *testing.T) {
			c, ok := byName[tc.chart]
			if !ok {
				t.Fatalf("no chart %s in the corpus", tc.chart)
			}
			err := crdschema.Admit(c.crd, c.cr(t, []byte(tc.spec)))
			switch {
			case tc.refused == "" && err != nil:
				t.Errorf("refused %q:\n%v", tc.spec, err)
			case tc.refused != "" && err == nil:
				t.Errorf("accepted %q (want it refused at %s)", tc.spec, tc.refused)
			case tc.refused != "" && !strings.Contains(err.Error(), tc.refused):
				t.Errorf("refused %q without naming %s:\n%v", tc.spec, tc.refused, err)
			}
		})
	}
}

// What the CRD cannot check is reported by field, never dropped silently.
func TestUncheckedKeywordsAreReportedPerField(t *testing.T) {
	want := map[string][]string{
		"sqldb": {
			"spec.auth: oneOf is checked by Helm",
			"spec.auth.secretKeys: patternProperties: key names matching",
			"spec.backup.target: anyOf is checked by Helm",
			"spec.extraLabels: patternProperties: keys by pattern are kept",
			"spec.tls.mode: an enum that allows null is checked by Helm only",
		},
	}
	for _, c := range charts(t) {
		var got strings.Builder
		for _, w := range c.warnings {
			got.WriteString(w.String() + "\n")
		}
		for _, w := range want[c.name] {
			if !strings.Contains(got.String(), w) {
				t.Errorf("%s: no warning %q among:\n%s", c.name, w, got.String())
			}
		}
	}
}
