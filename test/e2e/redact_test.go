package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

var vaultGVK = schema.GroupVersionKind{Group: "test.chartkeeper.dev", Version: "v1", Kind: "Vault"}

// Values the schema marks secret deep inside it (a password in a list's
// items, behind a $ref) and in a subchart's own schema never reach a
// status, an Event or the operator's log (debug level, Helm's lines
// included): not when a Go hook fails quoting them, not when the chart's
// fail quotes them raw, quoted, as JSON or base64-encoded. The operator is
// chartkeeper with a test hook (testdata/redactop).
func TestNestedAndSubchartSecretsAreRedacted(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-redact.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	op := startBinaryEnv(t, buildBinary(t, "./test/e2e/testdata/redactop"), []string{"WATCH_NAMESPACE=" + ns},
		operatorKubeconfig(t, env, watchesFile), watchesFile, "--metrics-bind-address", "0", "--zap-log-level=debug")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{vaultGVK}) })

	// Quotes and HTML characters: their escaped forms differ from the raw.
	const listSecret, subSecret = `s3cr3t-in-list-"q"`, `s3cr3t-of-sub<&>`
	ctx := context.Background()
	spec := map[string]any{
		"users":     []any{map[string]any{"name": "alice", "password": listSecret}},
		"store":     map[string]any{"token": subSecret},
		"leakyHook": true,
	}
	if err := env.Client.Create(ctx, newCR(vaultGVK, ns, "v", spec)); err != nil {
		t.Fatal(err)
	}
	waitVaultCondition(t, env, ns, api.ConditionReady, api.ReasonHookFailed, "hook leaky")

	spec["leakyHook"], spec["explode"] = false, true
	if err := env.Client.Update(ctx, vaultWithSpec(t, env, ns, spec)); err != nil {
		t.Fatal(err)
	}
	waitVaultCondition(t, env, ns, api.ConditionStalled, "", "refusing users")

	scanned := operatorWrote(t, env, op, vaultGVK, ns, "v")
	for _, want := range []string{"hook leaky", "refusing users"} {
		if !strings.Contains(scanned["events"], want) || !strings.Contains(scanned["operator log"], want) {
			t.Errorf("the events and the log should report %q: the scan would prove little", want)
		}
	}
	leaks := map[string]string{}
	for what, s := range map[string][2]string{"the list's password": {listSecret, "s3cr3t-in-list"}, "the subchart's token": {subSecret, "s3cr3t-of-sub"}} {
		// The secret's distinctive part catches it raw, quoted and escaped.
		leaks[what] = s[1]
		leaks[what+" (base64)"] = base64.StdEncoding.EncodeToString([]byte(s[0]))
		leaks[what+" (base64url)"] = base64.RawURLEncoding.EncodeToString([]byte(s[0]))
	}
	noLeaks(t, scanned, leaks)
	if !strings.Contains(scanned["status"], "[redacted]") {
		t.Errorf("the status should show where the secrets were: %s", scanned["status"])
	}
}

// waitVaultCondition waits until the Vault v has condition typ True for its
// generation, with reason (if not "") and a message containing msg.
func waitVaultCondition(t *testing.T, env *testenv.Env, ns, typ string, reason api.Reason, msg string) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, vaultGVK, ns, "v")
		if err != nil {
			return err
		}
		want := metav1.ConditionTrue
		if typ == api.ConditionReady {
			want = metav1.ConditionFalse
		}
		c := condition(st, typ)
		if c.Status != want || c.ObservedGeneration != u.GetGeneration() || (reason != "" && c.Reason != string(reason)) || !strings.Contains(c.Message, msg) {
			return fmt.Errorf("want %s %s %s %q, got %+v", typ, want, reason, msg, st.Conditions)
		}
		return nil
	})
}

// vaultWithSpec reads the Vault v and sets its spec.
func vaultWithSpec(t *testing.T, env *testenv.Env, ns string, spec map[string]any) client.Object {
	t.Helper()
	u, _, err := getCR(context.Background(), env, vaultGVK, ns, "v")
	if err != nil {
		t.Fatal(err)
	}
	u.Object["spec"] = spec
	return u
}

// The last gaps. A Secret's value read from a file ends in a newline,
// and a chart trims it: the trimmed form is redacted too. A long failure
// the chart rejects the values with is kept in status.terminalError cut
// and redacted, as every message is. Helm's log lines during an
// uninstall are redacted as those of the other actions are (here: the
// name of a ConfigMap named after the token).
func TestRedactionGaps(t *testing.T) {
	parallel(t, quick)
	env := testenv.Cluster(t)
	watchesFile := filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-redact-gaps.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	op := startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0", "--zap-log-level=debug")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{vaultGVK}) })

	const token, listSecret, padding = "s3cr3t-from-file-77", "pw-in-list-0815", 4000
	ctx := context.Background()
	createAll(t, env, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "v-file"},
		Data: map[string][]byte{"token": []byte(token + "\n")}})
	spec := map[string]any{
		"users":   []any{map[string]any{"name": "alice", "password": listSecret}},
		"explode": true, "padding": padding,
	}
	if err := env.Client.Create(ctx, newCR(vaultGVK, ns, "v", spec)); err != nil {
		t.Fatal(err)
	}
	waitVaultCondition(t, env, ns, api.ConditionStalled, api.ReasonChartError, "refusing users")
	_, st, err := getCR(ctx, env, vaultGVK, ns, "v")
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(st.TerminalError)); n > 1025 || !strings.Contains(st.TerminalError, "refusing users") {
		t.Errorf("status.terminalError (%d characters) is not the failure cut (the chart's runs over %d): %.200s", n, padding, st.TerminalError)
	}
	scanned := operatorWrote(t, env, op, vaultGVK, ns, "v")
	noLeaks(t, scanned, map[string]string{"the token (trimmed)": token, "the list's password": listSecret})
	if !strings.Contains(st.TerminalError, "trimmed [redacted]") {
		t.Errorf("status.terminalError should show where the trimmed token was: %.300s", st.TerminalError)
	}

	// Installed with a ConfigMap named after the token; uninstalled.
	spec["explode"], spec["namedAfterToken"] = false, true
	if err := env.Client.Update(ctx, vaultWithSpec(t, env, ns, spec)); err != nil {
		t.Fatal(err)
	}
	waitCRReady(t, env, vaultGVK, ns, "v")
	if err := env.Client.Delete(ctx, newCR(vaultGVK, ns, "v", nil)); err != nil {
		t.Fatal(err)
	}
	waitGone(t, env, vaultGVK, ns, "v", 2*time.Minute)
	var uninstall []string
	for _, line := range strings.Split(op.out.String(), "\n") {
		if strings.Contains(line, "Starting delete for") || strings.Contains(line, "uninstall: Deleting") {
			uninstall = append(uninstall, line)
		}
	}
	if !strings.Contains(strings.Join(uninstall, "\n"), "ConfigMap") {
		t.Fatalf("no log line of Helm's uninstall names the ConfigMaps: the scan would prove little\n%s", strings.Join(uninstall, "\n"))
	}
	for _, line := range uninstall {
		if strings.Contains(line, token) {
			t.Errorf("Helm's uninstall logged the token: %s", line)
		}
	}
}
