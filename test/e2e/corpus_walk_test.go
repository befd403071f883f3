package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// walkRow is what the walk needs to know of one corpus chart: everything
// else (CRD, RBAC, scope, sample) is create-api's, from the unedited chart.
type walkRow struct {
	kind string // the kind create-api is given
	// upgrade is merged into the sample's spec; effect is what it changes
	// on a released object.
	upgrade map[string]any
	effect  walkEffect
	// unchanged is a field of a released object the upgrade must keep
	// (want unused): a generated password read back with lookup, say.
	unchanged *walkEffect
	// violation is merged into the sample's spec of a new resource, which
	// the API server must refuse with a message naming field.
	violation map[string]any
	field     string
	// preDelete names the suffix of a pre-delete hook Job that must have
	// run (completed) when the resource is gone.
	preDelete string
}

// walkRows has one row per directory of test/corpus.
var walkRows = map[string]walkRow{
	"kvstore": {
		kind:      "KVStore",
		upgrade:   map[string]any{"master": map[string]any{"annotations": map[string]any{"walk": "upgraded"}}},
		effect:    walkEffect{kind: "StatefulSet", suffix: "-master", path: "{.metadata.annotations.walk}", want: "upgraded"},
		violation: map[string]any{"master": map[string]any{"count": "two"}},
		field:     "spec.master.count",
	},
	"sqldb": {
		kind:      "SQLDB",
		upgrade:   map[string]any{"primary": map[string]any{"podAnnotations": map[string]any{"walk": "upgraded"}}},
		effect:    walkEffect{kind: "StatefulSet", suffix: "-primary", path: "{.spec.template.metadata.annotations.walk}", want: "upgraded"},
		violation: map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}},
		field:     "spec.image.pullPolicy",
	},
	"gizmo-controller": {
		kind:      "GizmoController",
		upgrade:   map[string]any{"replicaCount": 2},
		effect:    walkEffect{kind: "Deployment", suffix: "-gizmo", path: "{.spec.replicas}", want: "2"},
		violation: map[string]any{"replicaCount": "two"},
		field:     "spec.replicaCount",
	},
	"certissuer": {
		kind:      "CertIssuer",
		upgrade:   map[string]any{"replicaCount": 2},
		effect:    walkEffect{kind: "Deployment", path: "{.spec.replicas}", want: "2"},
		violation: map[string]any{"replicaCount": "two"},
		field:     "spec.replicaCount",
	},
	"migrating-app": {
		kind:      "MigratingApp",
		upgrade:   map[string]any{"image": map[string]any{"tag": "2.1.0"}},
		effect:    walkEffect{kind: "Deployment", path: "{.spec.template.spec.containers[0].image}", want: "registry.example/ledger/ledger:2.1.0"},
		violation: map[string]any{"migrations": map[string]any{"backoffLimit": "never"}},
		field:     "spec.migrations.backoffLimit",
		preDelete: "-pre-delete",
	},
	"storefront": {
		kind:      "Storefront",
		upgrade:   map[string]any{"extraEnv": "- name: WALK\n  value: \"{{ .Release.Name }}-upgraded\"\n"},
		effect:    walkEffect{kind: "Deployment", path: "{.spec.template.spec.containers[0].env[?(@.name==\"WALK\")].value}", want: "$release-upgraded"},
		violation: map[string]any{"replicaCount": "many"},
		field:     "spec.replicaCount",
	},
	"keyvault": {
		kind:      "KeyVault",
		upgrade:   map[string]any{"replicaCount": 3},
		effect:    walkEffect{kind: "StatefulSet", path: "{.spec.replicas}", want: "3"},
		unchanged: &walkEffect{kind: "Secret", suffix: "-keyvault", path: "{.data.root-password}"},
		violation: map[string]any{"auth": map[string]any{"passwordLength": "long"}},
		field:     "spec.auth.passwordLength",
	},
	"webserver": {
		kind:      "WebServer",
		upgrade:   map[string]any{"replicaCount": 2},
		effect:    walkEffect{kind: "PodDisruptionBudget", path: "{.spec.maxUnavailable}", want: "1"},
		violation: map[string]any{"replicaCount": "two"},
		field:     "spec.replicaCount",
	},
	"objcache": {
		kind:      "ObjCache",
		upgrade:   map[string]any{"resourcesPreset": "micro"},
		effect:    walkEffect{kind: "Deployment", path: "{.spec.template.spec.containers[0].resources.requests.cpu}", want: "125m"},
		violation: map[string]any{"maxItemMemory": "lots"},
		field:     "spec.maxItemMemory",
	},
	"docdb": {
		kind:      "DocDB",
		upgrade:   map[string]any{"podAnnotations": map[string]any{"walk": "upgraded"}},
		effect:    walkEffect{kind: "StatefulSet", path: "{.spec.template.metadata.annotations.walk}", want: "upgraded"},
		violation: map[string]any{"replicaCount": "two"},
		field:     "spec.replicaCount",
	},
	"ingress-router": {
		kind: "IngressRouter",
		// The key hasKey asks for, commented out in values.yaml, reaches
		// the chart: the PDB appears above one replica and takes it.
		upgrade:   map[string]any{"controller": map[string]any{"replicaCount": 2, "maxUnavailable": "50%"}},
		effect:    walkEffect{kind: "PodDisruptionBudget", suffix: "-controller", path: "{.spec.maxUnavailable}", want: "50%"},
		violation: map[string]any{"controller": map[string]any{"replicaCount": "two"}},
		field:     "spec.controller.replicaCount",
	},
	"monitoring-stack": {
		kind:      "MonitoringStack",
		upgrade:   map[string]any{"grafana": map[string]any{"replicas": 2}},
		effect:    walkEffect{kind: "Deployment", suffix: "-grafana", path: "{.spec.replicas}", want: "2"},
		violation: map[string]any{"dashboards": map[string]any{"count": "all"}},
		field:     "spec.dashboards.count",
	},
}

// Every chart of test/corpus, packaged with create-api unedited, is walked
// as the generated ServiceAccount bound only to the generated ClusterRole:
// the sample installs and becomes Ready; a spec upgrade becomes Ready at
// revision 2 and shows on a released object; a schema violation is refused
// by the API server naming the field; deleting the resource removes it and
// the release's objects (kept ones excepted), after its pre-delete hook ran.
// Nothing create-api wrote is edited.
func TestCorpusWalk(t *testing.T) {
	parallel(t, 2*time.Minute)
	corpus := filepath.Join(testenv.RepoRoot(), "test", "corpus")
	charts, err := filepath.Glob(filepath.Join(corpus, "*", "Chart.yaml"))
	if err != nil || len(charts) == 0 {
		t.Fatalf("no chart in %s (%v)", corpus, err)
	}
	seen := map[string]bool{}
	for _, c := range charts {
		name := filepath.Base(filepath.Dir(c))
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			row, ok := walkRows[name]
			if !ok {
				t.Fatalf("test/corpus/%s has no row in walkRows: add a row (kind, upgrade and its effect, violation and its field)", name)
			}
			walkChart(t, filepath.Join(corpus, name), row)
		})
	}
	for name := range walkRows {
		if !seen[name] {
			t.Errorf("walkRows has a row for %s, which is not in test/corpus", name)
		}
	}
}
