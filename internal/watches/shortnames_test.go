package watches

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestShortNamesDerivedWhereFreeOrSet(t *testing.T) {
	entry := func(kind, extra string) string {
		return "- group: test.chartkeeper.dev\n  version: v1\n  kind: " + kind + "\n  chart: chart\n" + extra
	}
	for _, tc := range []struct {
		name string
		yaml string
		want [][]string // each watch's short names after Load
		err  string     // the error mentions this ("": no error)
	}{
		{"the kind's capitals", entry("WebApp", "") + entry("EtcdCluster", ""), [][]string{{"wa"}, {"ec"}}, ""},
		{"one capital: none derived", entry("App", ""), [][]string{nil}, ""},
		{"a built-in short name is skipped", entry("ConfigMirror", "") + entry("PodCache", "") + entry("ServiceAccount", ""), [][]string{nil, nil, nil}, ""},
		{"a built-in resource name is skipped", entry("PV", "") + entry("CSI", ""), [][]string{nil, {"csi"}}, ""},
		{"the first watch keeps a derived name", entry("WebApp", "") + entry("WidgetAgent", ""), [][]string{{"wa"}, nil}, ""},
		{"a derived name another kind set is skipped", entry("WebApp", "") + entry("Other", "  shortNames: [wa]\n"), [][]string{nil, {"wa"}}, ""},
		{"a derived name equal to a kind's singular is skipped", entry("DashBoard", "") + entry("Db", ""), [][]string{nil, nil}, ""},
		{"the same kind in two versions shares its names", entry("WebApp", "") + strings.Replace(entry("WebApp", ""), "v1\n", "v2\n", 1), [][]string{{"wa"}, {"wa"}}, ""},
		{"set names", entry("Memcached", "  shortNames: [mc, memc]\n"), [][]string{{"mc", "memc"}}, ""},
		{"set none", entry("WebApp", "  shortNames: []\n"), [][]string{{}}, ""},
		{"a set built-in name", entry("Memcached", "  shortNames: [svc]\n"), nil, `"svc" is a short name or resource name of a built-in Kubernetes resource`},
		{"a set name that is no label", entry("Memcached", "  shortNames: [Mc]\n"), nil, `"Mc" must be lower case`},
		{"a set name twice", entry("WebApp", "  shortNames: [w]\n") + entry("Worker", "  shortNames: [w]\n"), nil, `short name "w" is already used by WebApp`},
		{"a set name equal to another kind's singular", entry("WebApp", "  shortNames: [db]\n") + entry("Db", ""), nil, `short name "db" is already used by Db`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := Parse([]byte(tc.yaml), filepath.Join("testdata"))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range ws {
				if !slices.Equal(w.ShortNames, tc.want[i]) || (w.ShortNames == nil) != (tc.want[i] == nil) && len(tc.want[i]) > 0 {
					t.Errorf("%s: short names %q, want %q", w.Kind, w.ShortNames, tc.want[i])
				}
			}
		})
	}
}
