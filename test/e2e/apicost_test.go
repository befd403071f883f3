package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// requestsByKind reads chartkeeper_api_requests_total by "verb resource".
func requestsByKind(t *testing.T, url string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for line := range strings.Lines(scrapeRaw(t, url)) {
		rest, ok := strings.CutPrefix(line, "chartkeeper_api_requests_total{")
		if !ok {
			continue
		}
		labels, value, _ := strings.Cut(rest, "} ")
		var verb, resource string
		for _, kv := range strings.Split(labels, ",") {
			k, v, _ := strings.Cut(kv, "=")
			v = strings.Trim(v, `"`)
			switch k {
			case "verb":
				verb = v
			case "resource":
				resource = v
			}
		}
		var f float64
		fmt.Sscan(strings.TrimSpace(value), &f)
		out[verb+" "+resource] += f
	}
	return out
}

// What a release's life (install, upgrade, delete) costs the API server,
// counted by the operator itself: the release storage reads from the
// caches and its own writes, not from the API server. Each revision is
// written pending before it is applied, as Helm does, and again with its
// outcome; an uninstall without hooks writes nothing before it deletes the
// revisions. No LIST looks for a release made outside chartkeeper before
// an install: the metadata cache holds the Secrets of every Helm release,
// not only chartkeeper's. The old
// storage LISTed a release's Secrets twice per query and GETted each
// revision before every write: 14 LISTs, 8 GETs and 6 writes of release
// Secrets per App.
func TestReleaseStorageCostsNoReads(t *testing.T) {
	// It counts its operator's requests: it runs alone (serial), since under
	// the load of parallel tests a requeue before an install may look for an
	// outside release once more, or an informer relist its Secrets.
	const n = 6
	metrics := freeAddr(t)
	env, ns, _ := appFixture(t, testWatches(), "--metrics-bind-address", metrics)
	url := "http://" + metrics + "/metrics"
	ctx := context.Background()
	before := requestsByKind(t, url)
	readsBefore := storageReads(t, url)
	for i := range n {
		if err := env.Client.Create(ctx, newApp(ns, fmt.Sprintf("cost-%d", i), map[string]any{"data": "v1"})); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		waitReady(t, env, ns, fmt.Sprintf("cost-%d", i), 1)
	}
	installed := settledRequests(t, url)
	// An install creates its objects without reading them first: Helm's
	// install GETs each one to look for a conflict; here the API server's
	// answer to the create tells (createfirst.go).
	checkReads(t, "install", before, installed, n)
	for i := range n {
		patchSpec(t, env, ns, fmt.Sprintf("cost-%d", i), map[string]any{"data": "v2"})
	}
	for i := range n {
		waitReady(t, env, ns, fmt.Sprintf("cost-%d", i), 2)
	}
	upgraded := settledRequests(t, url)
	// Nothing was edited by hand: the upgrade patches from one manifest to
	// the next and the readiness comes from the cache; neither reads a
	// released object (Helm's upgrade read each one two or three times).
	checkReads(t, "upgrade", installed, upgraded, n)
	deleteApps(t, env, ns)
	after := settledRequests(t, url)
	per := map[string]float64{}
	var lines []string
	total := 0.0
	for k, v := range after {
		if d := (v - before[k]) / n; d > 0 {
			per[k] = d
			total += d
			lines = append(lines, fmt.Sprintf("%s %.2f", k, d))
		}
	}
	sort.Strings(lines)
	t.Logf("API requests per App over install, upgrade and delete: %.1f\n  %s", total, strings.Join(lines, "\n  "))
	// The release storage's own reads (an informer's relist of Secrets under
	// load is a LIST of Secrets too, and not the storage's).
	reads := storageReads(t, url)
	if got := reads["list"] - readsBefore["list"]; got > 0 {
		t.Errorf("the release storage LISTed Secrets %.0f times, want never: the metadata cache holds every Helm release Secret, so a release made outside chartkeeper is found there before an install", got)
	}
	if got := (reads["get"] - readsBefore["get"]) / n; got > 0.5 {
		t.Errorf("the release storage GETted %.2f Secrets per App, want none (a few when a cache lags)", got)
	}
	if got := per["create secrets"] + per["update secrets"]; got != 5 {
		t.Errorf("%.2f release writes per App, want 5: the install's revision pending and deployed, the upgrade's pending and deployed, and the previous one superseded", got)
	}
	// An uninstall deletes the release's history in one request, whatever
	// its length (Helm deletes each revision, here two).
	if got := per["deletecollection secrets"]; got != 1 {
		t.Errorf("%.2f deletions of the release's Secrets by label per App, want 1", got)
	}
	if got := per["delete secrets"]; got != 0 {
		t.Errorf("%.2f release Secrets deleted one by one per App, want none (one request for the history)", got)
	}
}

// storageReads reads chartkeeper_release_storage_reads_total by verb; both
// verbs must be there.
func storageReads(t *testing.T, url string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for line := range strings.Lines(scrapeRaw(t, url)) {
		for _, verb := range []string{"get", "list"} {
			if v, ok := strings.CutPrefix(line, `chartkeeper_release_storage_reads_total{verb="`+verb+`"} `); ok {
				var f float64
				fmt.Sscan(strings.TrimSpace(v), &f)
				out[verb] = f
			}
		}
	}
	if len(out) != 2 {
		t.Fatalf("chartkeeper_release_storage_reads_total{verb=get|list} not served: %v", out)
	}
	return out
}

// checkReads fails the test when the operator read released objects in a
// phase beyond what readiness may read. Helm's checks before a create or
// a patch read every object, ConfigMaps and Services too; readiness reads
// only the Deployment, and from the API server only when the cache of
// full objects has not caught up with the metadata cache's version (on a
// loaded machine, up to once per App and phase: 4 of 6 Apps in one CI run).
// Reads with no resource (the API server's version, discovery) are not
// reads of objects.
func checkReads(t *testing.T, phase string, from, to map[string]float64, n int) {
	t.Helper()
	var lines []string
	bad := false
	for k, v := range to {
		d := (v - from[k]) / float64(n)
		if !strings.HasPrefix(k, "get ") || k == "get " || d <= 0 {
			continue
		}
		lines = append(lines, fmt.Sprintf("%s %.2f", k, d))
		if k != "get deployments" || d > 1 {
			bad = true
		}
	}
	sort.Strings(lines)
	if bad {
		t.Errorf("GETs per App during the %s: %s; want none but a Deployment's readiness when a cache lags (at most 1)", phase, strings.Join(lines, ", "))
	}
}

// settledRequests waits until the operator sends no more requests for a
// second (the last status writes may still be on their way; bounded) and
// returns its count.
func settledRequests(t *testing.T, url string) map[string]float64 {
	t.Helper()
	var out map[string]float64
	testenv.Eventually(t, 30*time.Second, func(context.Context) error {
		a := requestsByKind(t, url)
		time.Sleep(time.Second)
		out = requestsByKind(t, url)
		if fmt.Sprint(a) != fmt.Sprint(out) {
			return fmt.Errorf("still sending requests")
		}
		return nil
	})
	return out
}

// scrapeRaw returns a metrics endpoint's text.
func scrapeRaw(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
