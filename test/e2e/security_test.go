package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The operator never writes a Secret's contents, or a value the chart's
// schema marks secret, into its log (at debug level, Helm's lines
// included), an Event or a status: the test releases an App with generated
// credentials, TLS keys and a writeOnly password, makes the chart fail with
// a message quoting the password, and scans everything the operator wrote.
func TestSecretsStayOutOfLogsAndEvents(t *testing.T) {
	parallel(t, quick)
	env, ns, op := appFixture(t, filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-hooks.yaml"), "--zap-log-level=debug")
	ctx := context.Background()
	const good, short = "hunter2-canary-good", "cnry-short" // the chart wants 12 characters at least
	if err := env.Client.Create(ctx, newApp(ns, "vault", map[string]any{"password": good})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "vault", 1)
	patchSpec(t, env, ns, "vault", map[string]any{"password": short})
	var message string
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "vault")
		if err != nil {
			return err
		}
		c := condition(st, api.ConditionStalled)
		if c.Status != metav1.ConditionTrue || !strings.Contains(c.Message, "too short") {
			return fmt.Errorf("want Stalled on the short password, got %+v", st.Conditions)
		}
		message = c.Message
		return nil
	})
	if !strings.Contains(message, "[redacted]") {
		t.Errorf("the chart's message should name the password as [redacted]: %q", message)
	}

	secrets := map[string]string{"the writeOnly password": good, "the rejected writeOnly password": short}
	for _, name := range []string{"vault-credentials", "vault-tls-server", "vault-tls-peer", "vault-ca", "vault-password"} {
		s := readSecret(t, env, ns, name)
		for k, v := range s.Data {
			if len(v) < 8 {
				continue
			}
			what := fmt.Sprintf("Secret %s key %s", name, k)
			secrets[what] = string(v)
			secrets[what+" (base64)"] = base64.StdEncoding.EncodeToString(v)
			if i := strings.Index(string(v), "\n"); strings.HasPrefix(string(v), "-----BEGIN") && i > 0 {
				// A PEM block's first line of data is enough to tell a leak.
				secrets[what+" (PEM body)"] = strings.SplitN(string(v)[i+1:], "\n", 2)[0]
			}
		}
	}
	scanned := operatorWrote(t, env, op, appGVK, ns, "vault")
	noLeaks(t, scanned, secrets)
	t.Logf("scanned %d bytes of log, %d of events and %d of status for %d secret strings",
		len(scanned["operator log"]), len(scanned["events"]), len(scanned["status"]), len(secrets))
}
