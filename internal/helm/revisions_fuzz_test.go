package helm

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzReleaseSecretLabels feeds the labels Helm's Secret driver writes on
// a release Secret (owner, name, status, version, modifiedAt) and the
// Secret's name, with arbitrary values, to what the engine reads them with
// (revisionsOf, ReleaseOf, revisionKey), beside two revisions Helm wrote
// (web v1 superseded, v2 deployed). Never a panic; the two real revisions
// are read once each, as written, oldest first; the fuzzed Secret is read
// as revision N only when its version label is exactly strconv.Itoa(N),
// N >= 1, and its name, when it has the storage key's form, names that
// release and revision ("03", "+3", "0" are skipped, never read as 3 or
// 0); its status is passed through as written; its time is its
// modifiedAt label's when that is a positive Unix time, else its
// createdAt label's, else its creation time.
// Seeds: the cases below and testdata/fuzz/FuzzReleaseSecretLabels.
func FuzzReleaseSecretLabels(f *testing.F) {
	for _, s := range []struct{ secret, owner, name, status, version, modifiedAt string }{
		{"sh.helm.release.v1.web.v3", "helm", "web", "pending-upgrade", "3", "1767225600"},
		{"sh.helm.release.v1.web.v3", "helm", "web", "deployed", "03", ""},
		{"sh.helm.release.v1.web.v3", "helm", "web", "deployed", "+3", ""},
		{"sh.helm.release.v1.web.v0", "helm", "web", "failed", "0", ""},
		{"sh.helm.release.v1.web.v-1", "helm", "web", "failed", "-1", "-5"},
		{"sh.helm.release.v1.web.v1", "helm", "web", "deployed", "1", ""},
		{"sh.helm.release.v1.web.v9", "helm", "web", "deployed", "2", ""},
		{"sh.helm.release.v1.other.v4", "helm", "web", "deployed", "4", ""},
		{"sh.helm.release.v1.a.v2.v4", "helm", "a.v2", "uninstalling", "4", "99999999999999999999"},
		{"sh.helm.release.v1.web.v4-abc123", "helm", "", "", "", ""}, // a chunk of the chunked driver
		{"my-secret", "someone", "web", "deployed", "5", ""},
		{"web-v6", "helm", "web", "unknown", "6", " 1"},
		{"sh.helm.release.v1.web.v7", "helm", "web", "superseded", "9223372036854775807", ""},
		{"sh.helm.release.v1.web.v7", "helm", "web", "superseded", "9223372036854775808", ""},
		{"sh.helm.release.v1..v1", "helm", "", "deployed", "1", ""},
		{"", "", "", "", "", ""},
	} {
		f.Add(s.secret, s.owner, s.name, s.status, s.version, s.modifiedAt)
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	f.Fuzz(func(t *testing.T, secret, owner, name, status, version, modifiedAt string) {
		real := func(v int, st release.Status) *metav1.ObjectMeta {
			return &metav1.ObjectMeta{Name: "sh.helm.release.v1.web.v" + strconv.Itoa(v), CreationTimestamp: metav1.NewTime(created),
				Labels: map[string]string{"owner": "helm", "name": "web", "status": st.String(), "version": strconv.Itoa(v), "createdAt": "1767225600"}}
		}
		labels := map[string]string{"owner": owner, "name": name, "status": status, "version": version, "modifiedAt": modifiedAt}
		fuzzed := &metav1.ObjectMeta{Name: secret, CreationTimestamp: metav1.NewTime(created), Labels: labels}
		revs := revisionsOf([]*metav1.ObjectMeta{real(2, release.StatusDeployed), fuzzed, real(1, release.StatusSuperseded)})

		v, err := strconv.Atoi(version)
		wantFuzzed := err == nil && v >= 1 && strconv.Itoa(v) == version
		if rel, n, ok := fuzzKeyOf(secret); ok && (rel != name || n != v) {
			wantFuzzed = false
		}
		seen := map[string]int{}
		for i, r := range revs {
			if i > 0 && revs[i-1].Version > r.Version {
				t.Fatalf("not oldest first: %v then %v", revs[i-1].Version, r.Version)
			}
			switch {
			case r.Labels["createdAt"] == "1767225600" && r.Labels["version"] == strconv.Itoa(r.Version):
				seen["real"+strconv.Itoa(r.Version)]++
				if want := map[int]release.Status{1: release.StatusSuperseded, 2: release.StatusDeployed}[r.Version]; r.Status != want || !r.Modified.Equal(time.Unix(1767225600, 0)) {
					t.Fatalf("revision %d read as %s at %s", r.Version, r.Status, r.Modified)
				}
			default:
				seen["fuzzed"]++
				if !wantFuzzed || r.Version != v || string(r.Status) != status {
					t.Fatalf("Secret %q (version %q, status %q) read as revision %d, %s", secret, version, status, r.Version, r.Status)
				}
				if sec, err := strconv.ParseInt(modifiedAt, 10, 64); err == nil && sec > 0 && !r.Modified.Equal(time.Unix(sec, 0)) ||
					(err != nil || sec <= 0) && !r.Modified.Equal(created) {
					t.Fatalf("modifiedAt %q read as %s", modifiedAt, r.Modified)
				}
			}
		}
		if seen["real1"] != 1 || seen["real2"] != 1 || seen["fuzzed"] != map[bool]int{true: 1}[wantFuzzed] || len(revs) != 2+seen["fuzzed"] {
			t.Fatalf("read %v from revisions 1, 2 and Secret %q version %q: %+v", seen, secret, version, revs)
		}

		if rel, ok := ReleaseOf(labels); ok != (owner == "helm" && name != "") || ok && rel != name {
			t.Fatalf("ReleaseOf(owner %q, name %q) = %q, %v", owner, name, rel, ok)
		}
		// revisionKey also decides whether the caches may answer for a
		// revision not stored yet.
		if rel, _, named := revisionKey(secret); named {
			if rel == "" || !strings.HasPrefix(secret, "sh.helm.release.v1."+rel+".v") {
				t.Fatalf("revisionKey(%q) = %q", secret, rel)
			}
		}
	})
}

// fuzzKeyOf reads sh.helm.release.v1.<release>.v<revision>, the revision as
// strconv.Itoa writes it (the test's own reading, independent of the code
// under test).
func fuzzKeyOf(name string) (string, int, bool) {
	rest, ok := strings.CutPrefix(name, "sh.helm.release.v1.")
	i := strings.LastIndex(rest, ".v")
	if !ok || i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+2:])
	if err != nil || n < 1 || strconv.Itoa(n) != rest[i+2:] {
		return "", 0, false
	}
	return rest[:i], n, true
}
