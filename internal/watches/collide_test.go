package watches

import (
	"strings"
	"testing"
)

func TestCollisionsWarnWhenReleaseNamesCannotBeUnique(t *testing.T) {
	entry := func(kind, extra string) string {
		return "- group: test.chartkeeper.dev\n  version: v1\n  kind: " + kind + "\n  chart: chart\n" + extra
	}
	for _, tc := range []struct {
		name string
		yaml string
		want []string // each warning mentions these (nil: no warning)
	}{
		{"two kinds with the default templates", entry("App", "") + entry("Db", ""),
			[]string{"App (entry 0) and Db (entry 1)", "ReleaseOwnedByAnother", `releaseName`}},
		{"the same fixed namespace and name template", entry("App", "  releaseNamespace: shared\n") + entry("Db", "  releaseNamespace: shared\n"),
			[]string{"App (entry 0) and Db (entry 1)"}},
		{"a kind with its own release name", entry("App", "") + entry("Db", "  releaseName: \"{{ .Name }}-db\"\n"), nil},
		{"a fixed release namespace apart", entry("App", "") + entry("Db", "  releaseNamespace: databases\n"), nil},
		{"a name template using the kind", entry("App", "  releaseName: \"{{ .Kind }}{{ .Name }}\"\n") + entry("Db", "  releaseName: \"{{ .Kind }}{{ .Name }}\"\n"), nil},
		{"one watch", entry("App", ""), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Parse([]byte(tc.yaml), "testdata")
			if err != nil {
				t.Fatal(err)
			}
			got := Collisions(ws)
			if tc.want == nil {
				if len(got) != 0 {
					t.Errorf("unexpected warnings %q", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("want one warning, got %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got[0], w) {
					t.Errorf("warning %q does not mention %q", got[0], w)
				}
			}
		})
	}
}

func TestAdoptDefaultsOffAndIsLoaded(t *testing.T) {
	ws, err := Parse([]byte("- version: v1\n  kind: A\n  chart: chart\n- version: v1\n  kind: B\n  chart: chart\n  adopt: true\n"), "testdata")
	if err != nil {
		t.Fatal(err)
	}
	if ws[0].Policy.Adopt || !ws[1].Policy.Adopt {
		t.Errorf("adopt: %v, %v; want false, true", ws[0].Policy.Adopt, ws[1].Policy.Adopt)
	}
	if _, err := Parse([]byte("- version: v1\n  kind: A\n  chart: chart\n  adopt: yes-please\n"), "testdata"); err == nil || !strings.Contains(err.Error(), "adopt") {
		t.Errorf("a non-boolean adopt: %v", err)
	}
}
