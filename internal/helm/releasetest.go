package helm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestRun is what a run of a release's tests found.
type TestRun struct {
	// Revision is the revision tested (the latest).
	Revision int
	// Tests are the test hooks, in the order Helm runs them (by weight,
	// then name).
	Tests []TestHook
	// Cleanup is the error of deleting the test hooks' objects after the
	// run (nil: none is left); it says nothing of the tests.
	Cleanup error
}

// TestHook is one test hook of a run.
type TestHook struct {
	// Kind and Name name its object (a Pod, as a rule).
	Kind, Name string
	// Phase is Helm's record of its run: Succeeded, Failed (it failed, or
	// did not finish within the timeout), or "" when it did not run (a
	// test before it failed).
	Phase release.HookPhase
	// Why says why a Pod that did not succeed did not: its phase, and
	// each unfinished or failed container's state, reason, exit code and
	// message (the end of its log when the Pod sets
	// terminationMessagePolicy: FallbackToLogsOnError). Read before the
	// Pod is deleted; "" for other kinds, or when it could not be read.
	Why string
}

// Test runs the tests of the latest revision of a release: its hooks
// annotated helm.sh/hook: test, what helm test runs, each bounded by
// g.Timeout (Helm's own test action, which records each hook's run in
// the release). Then it reads why the Pods that did not succeed failed,
// and deletes every test hook's object, whatever their delete policy says
// (CRDs aside, as Helm does). The error says which test failed, or why the
// tests could not be run; a release without test hooks is tested at once,
// nothing written.
func (c *Client) Test(ctx context.Context, name, ns string, g Guard) (TestRun, error) {
	cfg, err := c.config(ctx, ns, 0, g)
	if err != nil {
		return TestRun{}, err
	}
	last, err := cfg.Releases.Last(name)
	if err != nil {
		return TestRun{}, err
	}
	if len(testHooks(last)) == 0 {
		return TestRun{Revision: last.Version}, nil
	}
	rt := action.NewReleaseTesting(cfg)
	rt.Timeout, rt.Namespace = g.Timeout, ns
	rel, err := rt.Run(name)
	err = ExplainAs(c.explainTimeout(ctx, joinFlush(cfg, err), g.Timeout, name, ns), g.As)
	if rel == nil {
		return TestRun{Revision: last.Version}, err
	}
	run := testRunOf(rel)
	for i, h := range run.Tests {
		if h.Kind == "Pod" && h.Phase != "" && h.Phase != release.HookPhaseSucceeded && c.clientset != nil {
			if pod, perr := c.clientset.CoreV1().Pods(ns).Get(ctx, h.Name, metav1.GetOptions{}); perr == nil {
				run.Tests[i].Why = podFailure(pod)
			}
		}
	}
	run.Cleanup = deleteTestHooks(cfg.KubeClient, rel)
	return run, err
}

// testHooks lists a release's test hooks in the order Helm runs them: by
// weight, then by name.
func testHooks(rel *release.Release) []*release.Hook {
	var hs []*release.Hook
	for _, h := range rel.Hooks {
		if slices.Contains(h.Events, release.HookTest) {
			hs = append(hs, h)
		}
	}
	sort.SliceStable(hs, func(i, j int) bool {
		if hs[i].Weight != hs[j].Weight {
			return hs[i].Weight < hs[j].Weight
		}
		return hs[i].Name < hs[j].Name
	})
	return hs
}

// testRunOf describes the test hooks of a release as their last run left them.
func testRunOf(rel *release.Release) TestRun {
	run := TestRun{Revision: rel.Version}
	for _, h := range testHooks(rel) {
		th := TestHook{Kind: h.Kind, Name: h.Name, Phase: h.LastRun.Phase}
		if h.LastRun.StartedAt.IsZero() {
			th.Phase = ""
		}
		run.Tests = append(run.Tests, th)
	}
	return run
}

// deleteTestHooks deletes the objects of the test hooks that ran (a
// missing one is no error), CRDs aside.
func deleteTestHooks(kc kube.Interface, rel *release.Release) error {
	var errs []error
	for _, h := range testHooks(rel) {
		if h.LastRun.StartedAt.IsZero() || h.Kind == "CustomResourceDefinition" {
			continue
		}
		rl, err := kc.Build(bytes.NewBufferString(h.Manifest), false)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", h.Kind, h.Name, err))
			continue
		}
		if _, derrs := kc.Delete(rl); len(derrs) > 0 {
			errs = append(errs, fmt.Errorf("%s %s: %w", h.Kind, h.Name, errors.Join(derrs...)))
		}
	}
	return errors.Join(errs...)
}

// maxTermination bounds what is kept of a container's termination message
// (its last lines), in bytes.
const maxTermination = 512

// podFailure says why a Pod did not succeed: its phase (and reason), then
// each container that did not finish well.
func podFailure(pod *corev1.Pod) string {
	parts := []string{"phase " + string(pod.Status.Phase)}
	if r := pod.Status.Reason; r != "" {
		parts[0] += " (" + r + ": " + pod.Status.Message + ")"
	}
	statuses := append(append([]corev1.ContainerStatus(nil), pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, cs := range statuses {
		switch s := cs.State; {
		case s.Terminated != nil && (s.Terminated.ExitCode != 0 || s.Terminated.Reason != "Completed"):
			p := fmt.Sprintf("container %s: %s, exit code %d", cs.Name, s.Terminated.Reason, s.Terminated.ExitCode)
			if m := lastBytes(strings.TrimSpace(s.Terminated.Message), maxTermination); m != "" {
				p += ": " + m
			}
			parts = append(parts, p)
		case s.Waiting != nil:
			p := fmt.Sprintf("container %s waiting: %s", cs.Name, s.Waiting.Reason)
			if m := s.Waiting.Message; m != "" {
				p += ": " + m
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}

// lastBytes returns about the last n bytes of s, from a line start when
// one is near, marked when cut.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < n/2 {
		s = s[i+1:]
	}
	return "…" + strings.ToValidUTF8(s, "")
}
