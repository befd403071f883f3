package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chartkeeper/chartkeeper/internal/manifests"
	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// create-api writes crds.policy create for a chart that ships CRDs (in
// crds/ and in templates), says why, and keeps a policy set by the user;
// a chart without CRDs gets no crds field.
func TestCreateAPICRDPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, chart string
		want        string // the watch's crds.policy ("": no crds field)
		say         string
	}{
		{"crds/ and templated CRDs", "../../test/corpus/certissuer", watches.CRDPolicyCreate,
			"set crds.policy create: the chart ships CRDs (certificates.certs.corpus.chartkeeper.dev, issuers.certs.corpus.chartkeeper.dev)"},
		{"no CRDs", "../../test/corpus/kvstore", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := t.TempDir()
			o := Options{Chart: tc.chart, Group: "corpus.chartkeeper.dev", Version: "v1alpha1", Kind: "Thing", ProjectDir: proj}
			d := mustDecide(t, o)
			if said := strings.Join(d.Lines, "\n"); tc.say != "" && !strings.Contains(said, tc.say) {
				t.Errorf("create-api does not say %q:\n%s", tc.say, said)
			}
			ws, err := watches.Load(filepath.Join(proj, "watches.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if ws[0].CRDs != nil {
				got = ws[0].CRDs.Policy
			}
			if got != tc.want {
				t.Errorf("crds.policy %q, want %q", got, tc.want)
			}
		})
	}
}

// A scope or storage the user wrote into the entry is kept, with a note
// when the chart needs more than it allows; nothing is written and no
// decision line is printed for it.
func TestCreateAPIKeepsUserFields(t *testing.T) {
	for _, tc := range []struct {
		name, chart, field string // field: the user's, in the entry before create-api
		note               string
		noLine             string // what no decision line may say
		kept               func(watches.Watch) bool
	}{
		{"scope narrower than the chart's", "certissuer", "  scope:\n    namespaces: [team-a]\n",
			"note: watches.yaml: the scope of Thing is yours and is kept, but the chart renders what it does not allow (the release will stall):\n  scope.clusterScoped: true",
			"opened", func(w watches.Watch) bool {
				return w.Scope != nil && !w.Scope.ClusterScoped && len(w.Scope.Namespaces) == 1 && w.Scope.Namespaces[0] == "team-a"
			}},
		{"secret storage for a large record", "monitoring-stack", "  storage: secret\n",
			"note: watches.yaml: the storage of Thing is yours and is kept, but the release record measures",
			"chose", func(w watches.Watch) bool { return w.Storage == watches.StorageSecret }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := t.TempDir()
			entry := "- group: corpus.chartkeeper.dev\n  version: v1alpha1\n  kind: Thing\n  chart: charts/" + tc.chart + "\n" + tc.field
			if err := os.WriteFile(filepath.Join(proj, "watches.yaml"), []byte(entry), 0o644); err != nil {
				t.Fatal(err)
			}
			o := Options{Chart: "../../test/corpus/" + tc.chart, Group: "corpus.chartkeeper.dev", Version: "v1alpha1", Kind: "Thing", ProjectDir: proj}
			d := mustDecide(t, o)
			if len(d.Notes) != 1 || !strings.HasPrefix(d.Notes[0], tc.note) {
				t.Errorf("notes %q, want one starting %q", d.Notes, tc.note)
			}
			for _, l := range d.Lines {
				if strings.Contains(l, tc.noLine) {
					t.Errorf("a decision line about the user's field: %s", l)
				}
			}
			ws, err := watches.Load(filepath.Join(proj, "watches.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.kept(ws[0]) {
				t.Errorf("the user's field is not kept: %+v", ws[0])
			}
		})
	}
}

// mustDecide runs create-api's steps as the command does (CreateAPI, the
// manifests, Decide) and commits.
func mustDecide(t *testing.T, o Options) Decisions {
	t.Helper()
	res, err := CreateAPI(o)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := watches.Load(filepath.Join(o.ProjectDir, "watches.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	configDir := filepath.Join(o.ProjectDir, "config")
	files, _, err := manifests.Generate(configDir, ws, nil, manifests.CRDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := res.Decide(o, configDir, files)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Commit(); err != nil {
		t.Fatal(err)
	}
	return d
}
