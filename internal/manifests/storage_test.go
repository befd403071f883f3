package manifests

import (
	"math/rand"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/chartkeeper/chartkeeper/internal/watches"
)

// noise is n bytes of incompressible-ish text (base64's alphabet), as a
// dashboard full of panel data nearly is.
func noise(n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rnd := rand.New(rand.NewSource(17))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rnd.Intn(len(alphabet))]
	}
	return string(b)
}

func TestChooseStorage(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "Board"}
	configMap := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  board: {{ .Values.board | required \"board is required\" | quote }}\n" +
		"{{- range $path, $_ := .Files.Glob \"boards/*\" }}\n  {{ base $path }}: {{ $.Files.Get $path | quote }}\n{{- end }}\n"
	for _, tc := range []struct {
		name    string
		values  map[string]any // the chart's defaults
		files   map[string]string
		samples []map[string]any
		want    string // storage, or "error"
		what    string
	}{
		{name: "a small chart keeps one Secret", values: map[string]any{"board": "x"}, want: watches.StorageSecret, what: "defaults"},
		{name: "a 200 KiB file fits with room to spare", values: map[string]any{"board": "x"},
			files: map[string]string{"boards/a.json": noise(200 << 10)}, want: watches.StorageSecret, what: "defaults"},
		{name: "a 640 KiB file (chart file and manifest) does not", values: map[string]any{"board": "x"},
			files: map[string]string{"boards/a.json": noise(640 << 10)}, want: watches.StorageChunked, what: "defaults"},
		{name: "a large sample decides", values: map[string]any{"board": "x"},
			samples: []map[string]any{{"board": "y"}, {"board": noise(900 << 10)}}, want: watches.StorageChunked, what: "sample 2"},
		{name: "defaults that do not render are left to the samples", samples: []map[string]any{{"board": "y"}},
			want: watches.StorageSecret, what: "sample 1"},
		{name: "a sample that does not render is an error", values: map[string]any{"board": "x"},
			samples: []map[string]any{{"board": ""}}, want: "error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch := &chart.Chart{
				Metadata:  &chart.Metadata{APIVersion: "v2", Name: "boards", Version: "1.0.0"},
				Templates: []*chart.File{{Name: "templates/configmap.yaml", Data: []byte(configMap)}},
				Values:    tc.values,
			}
			for name, data := range tc.files {
				ch.Files = append(ch.Files, &chart.File{Name: name, Data: []byte(data)})
			}
			w := watches.Watch{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, ChartPath: "charts/boards", Chart: ch}
			renders, err := Render(w, Samples{gvk: tc.samples})
			var got StorageChoice
			if err == nil {
				got, err = ChooseStorage(renders)
			}
			if tc.want == "error" {
				if err == nil || !strings.Contains(err.Error(), "sample 1") {
					t.Fatalf("want an error naming sample 1, got %v (%+v)", err, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Storage != tc.want || got.What != tc.what {
				t.Errorf("got %s", got)
			}
			if !strings.Contains(got.String(), "storage: "+tc.want) || !strings.Contains(got.String(), Size(got.Size)) {
				t.Errorf("String() = %q", got)
			}
		})
	}
}
