package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

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
			args := []string{"create-api", "--chart", tc.chart, "--group", "corpus.chartkeeper.dev", "--version", "v1alpha1", "--kind", "Thing", "--project-dir", proj}
			var out, errb bytes.Buffer
			if code := Main(args, &out, &errb); code != ExitOK {
				t.Fatalf("exit %d:\n%s\n%s", code, out.String(), errb.String())
			}
			if tc.say != "" && !strings.Contains(out.String(), tc.say) {
				t.Errorf("create-api does not say %q:\n%s", tc.say, out.String())
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
