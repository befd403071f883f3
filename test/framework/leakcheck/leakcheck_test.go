package leakcheck

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
)

const (
	pw     = `hunter2-"canary"<&>` // its JSON and Go forms differ from the raw
	plain  = "correct-horse-battery"
	binary = "\xfb\xff\xfe-key-\xfb\xff" // its base64url differs from its base64
	pemKey = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\nQmFzZTY0Qm9keUxpbmVUd28=\n-----END PRIVATE KEY-----\n"
)

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestScanText(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		wantForm string // "": no leak
		wantLine int
	}{
		{"raw", "a\nb " + plain + " c", "raw", 2},
		{"in a JSON log line", `{"level":"error","msg":"upgrade failed","error":` + jsonString("password "+pw+" refused") + `}`, "JSON-escaped", 1},
		{"JSON without HTML escaping", `{"msg":"` + strings.ReplaceAll(pw, `"`, `\"`) + `"}`, "JSON-escaped", 1},
		// Forms that coincide are reported under the first name.
		{"Go-quoted", "x\ny\nerror: " + strconv.Quote(pw), "JSON-escaped", 3},
		{"Go-quoted inside a JSON line", `{"error":` + jsonString("value "+strconv.Quote(pw)) + `}`, "Go-quoted, then JSON-escaped", 1},
		{"base64", "data: " + base64.StdEncoding.EncodeToString([]byte(plain)), "base64", 1},
		{"raw base64", base64.RawURLEncoding.EncodeToString([]byte(pw)), "base64 (raw)", 1},
		{"base64url", base64.URLEncoding.EncodeToString([]byte(binary)), "base64url", 1},
		{"one line of a PEM key", `{"msg":"key MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"}`, "PEM line 2", 1},
		{"redacted", `{"msg":"password \"[redacted]\" refused"}`, "", 0},
		{"a part of the value only", "correct-horse and battery", "", 0},
		{"the PEM armour only", "-----BEGIN PRIVATE KEY-----", "", 0},
		{"nothing", "", "", 0},
	}
	s := New()
	for _, v := range []string{pw, plain, pemKey, binary, "short"} {
		s.Add("the value "+v[:min(6, len(v))], v)
	}
	if s.Len() != 4 {
		t.Fatalf("Len = %d, want 4: values under MinLength are left out", s.Len())
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			leaks := s.ScanText("log", tc.text)
			if tc.wantForm == "" {
				if len(leaks) != 0 {
					t.Fatalf("found leaks in %q:\n%s", tc.text, Describe(leaks))
				}
				return
			}
			if len(leaks) != 1 {
				t.Fatalf("want one leak in %q, got %d:\n%s", tc.text, len(leaks), Describe(leaks))
			}
			l := leaks[0]
			if l.Form != tc.wantForm || l.Where != fmt.Sprintf("log line %d", tc.wantLine) || !strings.HasPrefix(l.What, "the value ") || l.Excerpt == "" {
				t.Errorf("got %+v, want form %q at line %d", l, tc.wantForm, tc.wantLine)
			}
		})
	}
}

func TestShortValuesAndRepeats(t *testing.T) {
	s := New()
	if s.Add("a PIN", "12345") || !s.Add("a password", "p4ssw0rd") || !s.Add("the same again", "p4ssw0rd") || s.Len() != 1 {
		t.Fatalf("Add: want short values refused and repeats merged, Len %d", s.Len())
	}
	if leaks := s.ScanText("log", "PIN 12345"); len(leaks) != 0 {
		t.Errorf("a value under MinLength was looked for: %s", Describe(leaks))
	}
	leaks := s.ScanText("log", strings.Repeat("p4ssw0rd\n", 20))
	if len(leaks) != maxHitsPerForm || leaks[0].What != "a password" || leaks[4].Where != "log line 5" {
		t.Errorf("want the first %d hits, labelled by the first Add: %s", maxHitsPerForm, Describe(leaks))
	}
	s.MinLength = 3
	if !s.Add("a PIN", "12345") {
		t.Error("a lower MinLength takes shorter values")
	}
}

func TestScanCluster(t *testing.T) {
	ctx := context.Background()
	secret := func(name string, typ corev1.SecretType, data map[string]string) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name}, Type: typ, Data: map[string][]byte{}}
		for k, v := range data {
			s.Data[k] = []byte(v)
		}
		return s
	}
	event := func(name, reason, msg string, ann map[string]string) *corev1.Event {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: name, Annotations: ann},
			InvolvedObject: corev1.ObjectReference{Kind: "Database", Name: "db"}, Reason: reason, Message: msg}
	}
	cs := fake.NewClientset(
		secret("db", corev1.SecretTypeOpaque, map[string]string{"postgres-password": "Gen3rated-Admin-PW", "port": "5432"}),
		secret("sh.helm.release.v1.db.v1", "helm.sh/release.v1", map[string]string{"release": "H4sIAAAAAAAA-every-value"}),
		event("db.1", "UpgradeFailed", `upgrade failed: data[Gen3rated-Admin-PW]: Invalid value: "[redacted]"`, nil),
		event("db.2", "Installed", "installed revision 1", map[string]string{"note": base64.StdEncoding.EncodeToString([]byte("Gen3rated-Admin-PW"))}),
		event("db.3", "Upgraded", "upgraded to revision 2", nil),
	)
	s := New()
	if err := s.FromSecrets(ctx, cs, "team"); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 1 {
		t.Fatalf("FromSecrets: Len %d, want 1 (Helm's records and short values left out)", s.Len())
	}

	gvr := schema.GroupVersionResource{Group: "test.chartkeeper.dev", Version: "v1", Resource: "databases"}
	cr := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.chartkeeper.dev/v1", "kind": "Database",
		"metadata": map[string]any{"namespace": "team", "name": "db", "annotations": map[string]any{
			lastApplied:           `{"spec":{"password":"Gen3rated-Admin-PW"}}`, // the person's own
			"example.com/checked": "no Gen3rated-Admin-PW here",
		}},
		"spec": map[string]any{"password": "Gen3rated-Admin-PW"}, // the spec is the person's writing too
		"status": map[string]any{
			"conditions":         []any{map[string]any{"type": "Ready", "message": "ok"}, map[string]any{"type": "Stalled", "message": "key Gen3rated-Admin-PW refused"}},
			"lastFailureMessage": "[redacted]",
			"app":                map[string]any{"Gen3rated-Admin-PW": int64(1)},
		},
	}}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "DatabaseList"}, cr)

	leaks, err := s.Scan(ctx, cs, dyn, Where{
		Texts:      map[string]string{"operator log": "{\"msg\":\"ok\"}\n{\"msg\":\"Gen3rated-Admin-PW\"}\n"},
		Namespaces: []string{"team"},
		Resources:  []schema.GroupVersionResource{gvr},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"operator log line 2",
		"Event team/db.1 (Database db, reason UpgradeFailed) message",
		"Event team/db.2 (Database db, reason Installed) annotation note",
		"Database team/db metadata.annotations[example.com/checked]",
		"Database team/db status.app.Gen3rated-Admin-PW (the key)",
		"Database team/db status.conditions[1].message",
	}
	var got []string
	for _, l := range leaks {
		got = append(got, l.Where)
		if l.What != "Secret team/db key postgres-password" {
			t.Errorf("leak labelled %q", l.What)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("leaks found at\n%s\nwant\n%s\n(%s)", strings.Join(got, "\n"), strings.Join(want, "\n"), Describe(leaks))
	}

	// Check: the same in one call (less the text).
	checked, n, err := Check(ctx, cs, dyn, Where{Namespaces: []string{"team"}, Resources: []schema.GroupVersionResource{gvr}})
	if err != nil || n != 1 || len(checked) != len(want)-1 {
		t.Errorf("Check: %d values, err %v, leaks:\n%s", n, err, Describe(checked))
	}
}

func TestScanFile(t *testing.T) {
	s := New()
	s.Add("a password", plain)
	if _, err := s.ScanFile(t.TempDir() + "/missing.log"); err == nil {
		t.Error("a missing log file must be an error, not a clean scan")
	}
}
