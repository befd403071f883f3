package chaos

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/chartkeeper/chartkeeper/test/framework/leakcheck"
)

// The secret check (issue 21, item 5, over the chaos run): every release
// takes one value from a Secret, as real releases take their credentials.
// Each namespace has a Secret credentialsSecret whose key credentialsKey
// (a random password, new each run) every watch reads through valuesFrom
// into the values path credentialsPath; the chart (test/e2e/testdata/
// charts/app, templates/password.yaml) renders it into a Secret
// "<release>-password". At the end, once everything converged, the values
// of every Secret of the namespaces but Helm's release records (that
// password, and whatever else a chart generated) are looked for, raw,
// escaped and base64-encoded (test/framework/leakcheck), in the operator's
// log (every process of the run), the namespaces' Events and the status
// and annotations of every custom resource. Each value found is a problem
// of the report, and counts as lost.
const (
	credentialsSecret = "chaos-credentials"
	credentialsKey    = "password"
	credentialsPath   = "password"
)

// maxLeaksPerValue bounds the problems reported for one leaked value.
const maxLeaksPerValue = 5

// setUpCredentials adds the valuesFrom entry to every watch of the
// watches file and creates each namespace's Secret. Call it once the
// namespaces exist, before the operator starts.
func setUpCredentials(ctx context.Context, cs kubernetes.Interface, watchesPath string, namespaces []string) error {
	if err := addValuesFrom(watchesPath); err != nil {
		return err
	}
	for _, ns := range namespaces {
		sec := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: credentialsSecret},
			StringData: map[string]string{credentialsKey: "chaos-" + rand.Text()},
		}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating the Secret %s/%s: %w", ns, credentialsSecret, err)
		}
	}
	return nil
}

// addValuesFrom rewrites the watches file with, in every watch, a
// valuesFrom entry reading the credentials Secret of the resource's
// namespace.
func addValuesFrom(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var ws []map[string]any
	if err := yaml.Unmarshal(b, &ws); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(ws) == 0 {
		return fmt.Errorf("%s: no watch", path)
	}
	for _, w := range ws {
		if _, ok := w["valuesFrom"]; ok {
			return fmt.Errorf("%s: watch of %v has a valuesFrom already", path, w["kind"])
		}
		w["valuesFrom"] = []any{map[string]any{
			"kind": "Secret", "name": credentialsSecret, "valuesKey": credentialsKey, "targetPath": credentialsPath,
		}}
	}
	out, err := yaml.Marshal(ws)
	if err != nil {
		return err
	}
	head := "# The chaos harness's watches.yaml (test/chaos): kinds.go's watches, each\n" +
		"# with a password from the Secret " + credentialsSecret + " of its namespace (secrets.go).\n"
	return os.WriteFile(path, append([]byte(head), out...), 0o644)
}

// checkSecrets looks for the values of the namespaces' Secrets (but
// Helm's release records) in the operator's log, the namespaces' Events
// and the custom resources' statuses and annotations, and returns a
// problem per leaked value found (at most maxLeaksPerValue each, then one
// saying how many more), or one saying the check could not run or had
// nothing to look for. It says what it did on log.
func checkSecrets(ctx context.Context, log io.Writer, cs kubernetes.Interface, dyn dynamic.Interface, logFile string, namespaces []string, kinds []*chaosKind) []Problem {
	w := leakcheck.Where{LogFiles: []string{logFile}, Namespaces: namespaces}
	for _, k := range kinds {
		w.Resources = append(w.Resources, k.gvr())
	}
	var leaks []leakcheck.Leak
	var n int
	var err error
	// The cluster came through the faults, but a listing may still fail
	// once: a minute of retries.
	for deadline := time.Now().Add(time.Minute); ; {
		if leaks, n, err = leakcheck.Check(ctx, cs, dyn, w); err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) || !sleep(ctx, 2*time.Second) {
			break
		}
	}
	if err != nil {
		fmt.Fprintf(log, "chaos: secret check: %v\n", err)
		return []Problem{{Subject: "secret check", What: "could not run: " + err.Error()}}
	}
	fmt.Fprintf(log, "chaos: looked for %d secret values (the Secrets of %d namespaces but Helm's records) in %s, the namespaces' Events and the statuses of their %d kinds: %d found\n",
		n, len(namespaces), filepath.Base(logFile), len(kinds), len(leaks))
	if n == 0 {
		return []Problem{{Subject: "secret check", What: fmt.Sprintf("no secret value to look for: the Secrets %s are gone (the scan proves nothing)", credentialsSecret)}}
	}
	return leakProblems(leaks)
}

// leakProblems turns leaks into problems, one subject per leaked value.
func leakProblems(leaks []leakcheck.Leak) []Problem {
	var out []Problem
	count := map[string]int{}
	var order []string
	for _, l := range leaks {
		subject := "secret value " + l.What
		if count[subject] == 0 {
			order = append(order, subject)
		}
		if count[subject]++; count[subject] <= maxLeaksPerValue {
			out = append(out, Problem{Subject: subject, What: fmt.Sprintf("leaked (%s) into %s: %s", l.Form, l.Where, l.Excerpt)})
		}
	}
	for _, s := range order {
		if more := count[s] - maxLeaksPerValue; more > 0 {
			out = append(out, Problem{Subject: s, What: fmt.Sprintf("leaked into %d more places", more)})
		}
	}
	return out
}
