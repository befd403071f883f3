package e2e

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/framework/leakcheck"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var databaseGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "Database"}

// Issue 21, "Secrets stay secret": a Database (testdata/charts/database,
// watches-secrets.yaml) whose chart generates passwords (randAlphaNum, kept
// by lookup) and a CA and certificate (genCA), whose metrics password the
// operator's credentials hook generates, and whose user takes its name and
// password from the resource's own Secret (a values document) and its
// replication password from another key of it (a targetPath). It goes
// through install, an upgrade (a new password in the Secret), a rotation
// of the hook's credentials, hand edits of a generated password and of the
// pooler's user list keyed by the Secret's user name (drift),
// an upgrade the API server rejects quoting the Secret's user name (rolled
// back, retried, stalled), the fix, and deletion. Then every value of
// every Secret of the namespace (but Helm's release records), collected
// along the way, and every value the Secret held, are looked for
// (leakcheck: raw, escaped, base64) in the operator's whole debug log,
// every Event of the namespace, and every status and annotation the
// resource showed: none may be there.
func TestSecretsStayOutOfWhatTheOperatorWrites(t *testing.T) {
	parallel(t, 25*time.Second)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-secrets.yaml")
	env, ns, op := confinedFixture(t, watchesFile, watchesFile, []schema.GroupVersionKind{databaseGVK}, []string{"--zap-log-level=debug"})
	ctx := context.Background()
	secrets := leakcheck.New()
	collect := func() { // the Secrets as they are now: generated values change along the way
		t.Helper()
		if err := secrets.FromSecrets(ctx, env.Clientset, ns); err != nil {
			t.Fatal(err)
		}
	}
	statuses := watchStatuses(t, env, ns, "orders")

	const (
		user, badUser  = "orders_owner", "Orders Owner" // a space: not a valid key of the pooler's Secret
		pw1, pw2, pw3  = "Tr0ub4dor-first-9x", "Tr0ub4dor-second-7q", "Tr0ub4dor-third-5k"
		replication    = "repl-Secret-4711-zz"
		handEdited     = "hand-edited-admin-pw"
		authSecretName = "orders-auth"
	)
	for what, v := range map[string]string{"the user name": user, "the refused user name": badUser, "the first password": pw1,
		"the second password": pw2, "the third password": pw3, "the replication password": replication, "the hand-edited admin password": handEdited} {
		secrets.Add(what+" (from Secret "+ns+"/"+authSecretName+")", v)
	}
	setAuth := func(username, password string) {
		t.Helper()
		mergePatch(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: authSecretName}},
			fmt.Sprintf(`{"stringData":{"values.yaml":%q}}`, authDoc(username, password)))
	}

	// Install: generated passwords, certificates and hook credentials.
	if err := env.Client.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: authSecretName},
		StringData: map[string]string{"values.yaml": authDoc(user, pw1), "replication-password": replication}}); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Create(ctx, newCR(databaseGVK, ns, "orders", map[string]any{"auth": map[string]any{"database": "orders"}})); err != nil {
		t.Fatal(err)
	}
	rev := waitDatabaseReady(t, env, ns, 0)
	generated := readSecret(t, env, ns, "orders-database")
	if got := string(generated.Data["password"]); got != pw1 {
		t.Fatalf("the chart's Secret holds the user password %q, want the one the Secret gave", got)
	}
	if len(generated.Data["postgres-password"]) != 24 || len(readSecret(t, env, ns, "orders-database-crt").Data["tls.key"]) == 0 {
		t.Fatalf("the chart generated no admin password or key: %v", generated.Data)
	}
	collect()

	// An upgrade: a new password in the Secret.
	setAuth(user, pw2)
	rev = waitDatabaseReady(t, env, ns, rev)
	if again := readSecret(t, env, ns, "orders-database"); !bytes.Equal(again.Data["postgres-password"], generated.Data["postgres-password"]) {
		t.Error("the upgrade generated a new admin password: lookup should have kept it")
	}
	collect()

	// The hook's credentials rotated: the old ones are kept until Ready.
	mergePatch(t, env, newCR(databaseGVK, ns, "orders", nil), `{"metadata":{"annotations":{"chartkeeper.dev/rotate-credentials":"once"}}}`)
	collect() // previous-monitoring-password, while it is there
	rev = waitDatabaseReady(t, env, ns, rev)
	collect()

	// A person edits a generated password, and the pooler's password
	// (its key is the Secret's user name: a drift message names the
	// field): drift, put back.
	for name, key := range map[string]string{"orders-database": "postgres-password", "orders-database-pooler-users": user} {
		mergePatch(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}},
			fmt.Sprintf(`{"stringData":{%q:%q}}`, key, handEdited))
	}
	if err := waitFor(time.Minute, func(ctx context.Context) bool {
		s, p := &corev1.Secret{}, &corev1.Secret{}
		return env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders-database"}, s) == nil &&
			env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "orders-database-pooler-users"}, p) == nil &&
			bytes.Equal(s.Data["postgres-password"], generated.Data["postgres-password"]) && string(p.Data[user]) == pw2
	}); err != nil {
		t.Errorf("the hand-edited passwords were not put back within a minute (%v): the drift step proves little", err)
	}

	// An upgrade the API server rejects: the user name is no valid key of
	// the pooler's Secret, and the error quotes it. Rolled back, retried
	// once, rolled back again, stalled.
	setAuth(badUser, pw2)
	failed := waitDatabaseStalled(t, env, ns)
	if !strings.Contains(failed.LastFailureMessage, "Invalid value") {
		t.Errorf("the failure should say what the API server refused (the scan would prove little): %q", failed.LastFailureMessage)
	}
	if c := condition(failed, api.ConditionRemediated); c.Status != metav1.ConditionTrue || c.Reason != string(api.ReasonRollbackSucceeded) {
		t.Errorf("the failed upgrade was not rolled back: Remediated %+v", c)
	}

	// The fix: a valid user name (and a new password) upgrades it again.
	setAuth(user, pw3)
	waitDatabaseReady(t, env, ns, rev)
	collect()

	// Deletion, then the scan of all the operator wrote.
	if err := env.Client.Delete(ctx, newCR(databaseGVK, ns, "orders", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, databaseGVK, ns, "orders", 2*time.Minute)
	shown := statuses()
	log := op.out.String()
	if !strings.Contains(log, `"level":"debug"`) || !strings.Contains(log, "Invalid value") {
		t.Fatalf("the operator log has no debug lines or no word of the refused upgrade: the scan would prove little")
	}
	leaks := secrets.ScanText("operator log", log)
	evLeaks, err := secrets.ScanEvents(ctx, env.Clientset, ns)
	if err != nil {
		t.Fatal(err)
	}
	leaks = append(leaks, evLeaks...)
	for _, u := range shown {
		leaks = append(leaks, secrets.ScanObject(u)...)
	}
	seen := map[string]bool{}
	for _, l := range leaks {
		if key := l.Where + "|" + l.What + "|" + l.Form; !seen[key] {
			seen[key] = true
			// LEAK: a product bug (issue 21, item 5): the operator wrote a
			// secret value. KNOWN, open as of 2026-11-25: the DriftCorrected
			// Event, and its line in the operator's log, name the drifted
			// fields unredacted, "restored [Secret <ns>/orders-database-
			// pooler-users (edited: /data/orders_owner)]": the key is the
			// user name the Secret gave (internal/release/correctdrift.go
			// builds the note; Engine.event does not redact, while the
			// Released condition does). This assertion fails until fixed.
			t.Errorf("LEAK %s", l)
		}
	}
	t.Logf("looked for %d secret values in %d bytes of log, the namespace's Events and %d statuses the resource showed: %d leaks",
		secrets.Len(), len(log), len(shown), len(seen))
}

// authDoc is the values document of the Database's Secret.
func authDoc(username, password string) string {
	return fmt.Sprintf("auth:\n  username: %q\n  password: %q\n", username, password)
}

// waitDatabaseReady waits until the Database orders is Ready at a revision
// after prev (whatever it said before: Stalled, say), and returns it.
func waitDatabaseReady(t *testing.T, env *testenv.Env, ns string, prev int) int {
	t.Helper()
	rev := 0
	testenv.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, databaseGVK, ns, "orders")
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() || st.Release == nil || st.Release.Revision <= prev {
			return fmt.Errorf("not Ready after revision %d: release %+v, conditions %+v", prev, st.Release, st.Conditions)
		}
		rev = st.Release.Revision
		return nil
	})
	return rev
}

// waitDatabaseStalled waits until the Database orders is Stalled, its
// retries spent, and returns its status.
func waitDatabaseStalled(t *testing.T, env *testenv.Env, ns string) api.Status {
	t.Helper()
	var st api.Status
	testenv.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, databaseGVK, ns, "orders")
		if err != nil {
			return err
		}
		st = s
		if c := condition(s, api.ConditionStalled); c.Status != metav1.ConditionTrue {
			return fmt.Errorf("not Stalled: %+v", s.Conditions)
		}
		return nil
	})
	return st
}

// watchStatuses polls the resource every 200 ms until the test asks, and
// returns every distinct status and annotations it showed (a status lasts
// a moment between two steps; a scan at the end would miss it).
func watchStatuses(t *testing.T, env *testenv.Env, ns, name string) func() []*unstructured.Unstructured {
	var (
		mu    sync.Mutex
		seen  = map[string]bool{}
		shown []*unstructured.Unstructured
		stop  = make(chan struct{})
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(databaseGVK)
			if err := env.Client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, u); err == nil {
				key := mustJSON(u.Object["status"]) + mustJSON(u.GetAnnotations())
				mu.Lock()
				if !seen[key] {
					seen[key] = true
					shown = append(shown, u)
				}
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	end := func() { once.Do(func() { close(stop); <-done }) }
	t.Cleanup(end)
	return func() []*unstructured.Unstructured {
		end()
		mu.Lock()
		defer mu.Unlock()
		return shown
	}
}

// waitFor polls cond until it holds or within passes.
func waitFor(within time.Duration, cond func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for !cond(ctx) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil
}
