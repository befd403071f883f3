package helm

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
)

// webappRelease is revision version of release name in ns, of the webapp
// chart, with values and a manifest of its own.
func webappRelease(t testing.TB, name, ns string, version int) *release.Release {
	t.Helper()
	ch, err := loader.Load("../../charts/webapp")
	if err != nil {
		t.Fatal(err)
	}
	return &release.Release{Name: name, Namespace: ns, Version: version, Chart: ch,
		Config:   map[string]any{"replicaCount": version, "image": map[string]any{"tag": fmt.Sprint("v", version)}},
		Manifest: fmt.Sprintf("---\n# Source: webapp/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: %s\n  namespace: %s\n", name, ns),
		Info:     &release.Info{Status: release.StatusDeployed, Description: "Upgrade complete", LastDeployed: helmtime.Unix(int64(1700000000+version), 0)},
		Labels:   map[string]string{"chartkeeper.dev/managed": "true"}}
}

// helmDecode is Helm's Secret driver's decoding of data["release"]: base64,
// gunzip when it is gzip, JSON.
func helmDecode(t *testing.T, text []byte) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(string(text))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(b, gzipMagic) {
		r, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		if b, err = io.ReadAll(r); err != nil {
			t.Fatal(err)
		}
	}
	var rel release.Release
	if err := json.Unmarshal(b, &rel); err != nil {
		t.Fatalf("Helm cannot decode the payload: %v", err)
	}
	return b
}

// Every revision of every release of one chart version holds the chart's
// bytes once and the rest packed against another of the chart's (at most
// a tenth of its gzip payload in all), and reads back the same release.
func TestPackKeepsAChartOnce(t *testing.T) {
	var packs []packedData
	var texts [][]byte
	for i, r := range []struct {
		name, ns string
		version  int
	}{{"web", "a", 1}, {"web", "a", 2}, {"shop", "b", 1}, {"blog", "c", 7}} {
		rel := webappRelease(t, r.name, r.ns, r.version)
		text, err := encodeRelease(rel)
		if err != nil {
			t.Fatal(err)
		}
		gz, _ := base64.StdEncoding.DecodeString(text)
		p := pack(map[string][]byte{"release": []byte(text)})
		held := heldPayloadBytes(p)
		t.Logf("revision %d holds %d bytes of its %d-byte gzip payload", i, held, len(gz))
		if held > len(gz)/10 {
			t.Errorf("revision %d holds %d bytes of its %d-byte gzip payload: want the chart kept once, not in each, and the rest packed against another release's", i, held, len(gz))
		}
		packs, texts = append(packs, p), append(texts, []byte(text))
	}
	for i, p := range packs {
		if !sameChart(p, packs[0]) {
			t.Errorf("revision %d keeps a chart of its own", i)
		}
		got, err := p.unpack()
		if err != nil {
			t.Fatal(err)
		}
		if want := helmDecode(t, texts[i]); !bytes.Equal(helmDecode(t, got["release"]), want) {
			t.Errorf("revision %d reads back other JSON than was stored", i)
		}
		got["release"][0] ^= 1 // the caller's copy
		if again, _ := p.unpack(); !bytes.Equal(helmDecode(t, again["release"]), helmDecode(t, texts[i])) {
			t.Errorf("revision %d changed with the caller's copy", i)
		}
	}
}

func TestMemberSpan(t *testing.T) {
	for _, c := range []struct {
		js, want string // want: the span; "" none
	}{
		{`{"name":"web","info":{"a":[1,{"b":"}"}]},"chart":{"x":"\\\"{"},"config":{}}`, `,"chart":{"x":"\\\"{"}`},
		{`{"chart":{"a":1},"b":2}`, `"chart":{"a":1}`},
		{`{"version":1,"chart":null}`, `,"chart":null`},
		{` { "a" : true , "chart" : [ 1 , 2 ] }`, ` , "chart" : [ 1 , 2 ]`},
		{`{"a":"chart","b":{"chart":1}}`, ""},
		{`{"a":1,"chart":{"x":1}`, `,"chart":{"x":1}`}, // not validated: the bytes go back as they were
		{`{"a":"open`, ""},
		{`["chart"]`, ""},
		{``, ""},
	} {
		start, end, ok := memberSpan([]byte(c.js), "chart")
		got := ""
		if ok {
			got = c.js[start:end]
		}
		if got != c.want {
			t.Errorf("memberSpan(%s) = %q, want %q", c.js, got, c.want)
		}
	}
}

// A body up to maxPackedBody is packed against another of its chart's; a
// longer one (a long manifest) is kept as its gzip, which keeps less of
// it. Both read back the release as it was stored.
func TestPackKeepsALongBodyAsItsGzip(t *testing.T) {
	long := webappRelease(t, "long", "a", 1)
	var m strings.Builder
	for i := 0; m.Len() <= 2*maxPackedBody; i++ {
		fmt.Fprintf(&m, "---\n# Source: webapp/templates/cm-%d.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long-%d\ndata:\n  port: %q\n", i, i, fmt.Sprint(8000+i))
	}
	long.Manifest = m.String()
	for _, c := range []struct {
		name   string
		rel    *release.Release
		gzBody bool
	}{
		{"a short body", webappRelease(t, "short", "a", 1), false},
		{"a long body", long, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			text, err := encodeRelease(c.rel)
			if err != nil {
				t.Fatal(err)
			}
			p := pack(map[string][]byte{"release": []byte(text)})
			if !p.release.shared() || (p.release.gzBody != nil) != c.gzBody || p.release.body.Compressed() == c.gzBody {
				t.Errorf("shared %v, kept as gzip %v, packed %v; want shared, gzip %v", p.release.shared(),
					p.release.gzBody != nil, p.release.body.Compressed(), c.gzBody)
			}
			got, err := p.unpack()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(helmDecode(t, got["release"]), helmDecode(t, []byte(text))) {
				t.Error("reads back other JSON than was stored")
			}
		})
	}
}

// A payload of another shape is kept, and read back, as it came.
func TestPackKeepsOtherPayloadsAsTheyCame(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		if err := gzipTo(&buf, b); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	b64 := func(b []byte) []byte { return []byte(base64.StdEncoding.EncodeToString(b)) }
	bomb := gz(bytes.Repeat([]byte(" "), maxPayloadJSON+1))
	for _, c := range []struct{ name, text string }{
		{"JSON without gzip (Helm before it compressed)", string(b64([]byte(`{"name":"web","chart":{"metadata":{}}}`)))},
		{"gzip of an object without a chart", string(b64(gz([]byte(`{"name":"web","manifest":"x"}`))))},
		{"gzip of an array", string(b64(gz([]byte(`[{"chart":1}]`))))},
		{"gzip of broken JSON", string(b64(gz([]byte(`{"name":"web","chart":{`))))},
		{"a chart only below the top", string(b64(gz([]byte(`{"config":{"chart":{"a":1}}}`))))},
		{"broken gzip", string(b64(append(bytes.Clone(gzipMagic), 0, 1, 2, 3)))},
		{"gzip past the bound", string(b64(bomb))},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := map[string][]byte{"release": []byte(c.text)}
			p := pack(data)
			if p.release.shared() {
				t.Error("kept its chart apart")
			}
			got, err := p.unpack()
			if err != nil || !maps.EqualFunc(got, data, bytes.Equal) {
				t.Errorf("unpack = %.60q, %v; want it as it came", got["release"], err)
			}
		})
	}
}

// Through Helm's storage on the secret cache: what a cached read returns
// is the release that was written, chart and all.
func TestStorageReadsSharedChartsBack(t *testing.T) {
	cs, calls := liveSecrets(t)
	meta := &metaView{items: map[string]metav1.PartialObjectMetadata{}}
	c := newSecretCache(meta, ManagedSecrets)
	st := newStorage(c.view(cs.CoreV1().Secrets("a"), "a"), StorageSecret, func(string, ...any) {})
	var wrote []*release.Release
	for _, name := range []string{"web", "shop"} {
		rel := webappRelease(t, name, "a", 1)
		if err := st.Create(rel); err != nil {
			t.Fatal(err)
		}
		wrote = append(wrote, rel)
	}
	for _, want := range wrote {
		got, err := st.Get(want.Name, want.Version) // within cacheLag of the write: the cache answers
		if err != nil {
			t.Fatal(err)
		}
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			t.Errorf("%s read back differs from what was written", want.Name)
		}
	}
	// A reader of metadata only (the engine's list of stored revisions)
	// gets the Secrets without data, from the cache; others get the data.
	live, _ := cs.CoreV1().Secrets("a").List(context.Background(), metav1.ListOptions{})
	for i := range live.Items {
		meta.show(&live.Items[i])
	}
	calls.Store(0)
	for _, v := range []struct {
		view     clientcorev1.SecretInterface
		withData bool
	}{{c.metadataView(cs.CoreV1().Secrets("a"), "a"), false}, {c.view(cs.CoreV1().Secrets("a"), "a"), true}} {
		l, err := v.view.List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=web"})
		if err != nil || len(l.Items) != 1 {
			t.Fatalf("list: %v, %v", l, err)
		}
		if got := l.Items[0]; (got.Data != nil) != v.withData || got.Labels["name"] != "web" {
			t.Errorf("with data %v: got data %v, labels %v", v.withData, got.Data != nil, got.Labels)
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d requests: want the cache to answer", n)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var packs []packedData
	for _, e := range c.secrets {
		packs = append(packs, e.data)
	}
	if len(packs) != 2 || !sameChart(packs[0], packs[1]) {
		t.Errorf("the cache holds %d revisions, their chart kept once: %v", len(packs), len(packs) == 2 && sameChart(packs[0], packs[1]))
	}
}

func heldPayloadBytes(p packedData) int {
	return len(p.release.asIs) + p.release.body.Len() + len(p.release.gzBody)
}

func sameChart(a, b packedData) bool { return a.release.shared() && a.release.chart == b.release.chart }
