package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// An operator killed (SIGKILL) while an upgrade is pending leaves the
// release pending-upgrade; the next operator, once the watch's action
// timeout (15s here) has passed since the revision was last written, takes
// it as abandoned, unlocks it and converges. (The chart's hook makes Helm
// record the revision pending: without hooks it is recorded once, with its
// outcome; see crash_norecord_test.go.)
func unlockAfterKillDuringUpgrade(t *testing.T) {
	// Serial but for its sibling (TestKillDuringUpgrade): it waits the
	// action timeout out, which an action on 150 ConfigMaps must not reach.
	watchesFile := crashWatches()
	env, ns, first := crashFixture(t, watchesFile)
	ctx := context.Background()
	// 150 ConfigMaps make the upgrade take long enough to be caught pending.
	if err := env.Client.Create(ctx, newApp(ns, "big", map[string]any{"configMaps": 150, "hook": true})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "big", 1)

	patchSpec(t, env, ns, "big", map[string]any{"data": "v2"})
	deadline := time.Now().Add(time.Minute)
	for {
		if st := latestReleaseStatus(t, env, ns, "big"); st == "pending-upgrade" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never saw the upgrade pending")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := syscall.Kill(first.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	first.done <- nil
	if st := latestReleaseStatus(t, env, ns, "big"); st != "pending-upgrade" {
		t.Fatalf("after the kill the latest revision is %q, want it left pending-upgrade", st)
	}

	restartConfined(t, env, ns, watchesFile)
	t.Cleanup(func() { deleteApps(t, env, ns) })
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, st, err := getApp(ctx, env, ns, "big")
		if err != nil {
			return err
		}
		if latest := latestReleaseStatus(t, env, ns, "big"); latest != "deployed" {
			return fmt.Errorf("latest revision %s", latest)
		}
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "big-extra-149"}, cm); err != nil {
			return err
		}
		if cm.Data["data"] != "v2" {
			return fmt.Errorf("configmap not upgraded: %v", cm.Data)
		}
		if st.Release == nil || st.Release.Revision < 3 {
			return fmt.Errorf("release %+v", st.Release)
		}
		return nil
	})
	waitReady(t, env, ns, "big", 0)
}

// crashFixture: the App CRD, a namespace and an operator on watchesFile
// confined to the namespace (WATCH_NAMESPACE), as is the one
// restartConfined starts after it: what other tests do or leave in theirs
// never reaches them. The CRD comes from testWatches(), as appFixture's,
// so that every test applies the same one.
func crashFixture(t *testing.T, watchesFile string) (*testenv.Env, string, *process) {
	t.Helper()
	env := testenv.Cluster(t)
	installCRDs(t, env, testWatches())
	ns := env.Namespace(t)
	return env, ns, restartConfined(t, env, ns, watchesFile)
}

// TestKillDuringUpgrade holds the two tests that kill an operator during
// an upgrade and wait the action timeout out (crashWatches). They run
// serially with the rest of the suite, for the reason crashWatches gives,
// but beside each other: each confines its operator to a namespace of its
// own, and two actions on 150 ConfigMaps at once stay seconds away from
// the 15 s timeout on an otherwise quiet cluster. Most of their time is
// waiting for that timeout, so together they take the time of one.
func TestKillDuringUpgrade(t *testing.T) {
	for _, c := range []struct {
		name string
		run  func(*testing.T)
	}{
		{"MidApplyLeavesItsRecord", killMidUpgradeLeavesItsRecord},
		{"PendingIsUnlockedAfterTheTimeout", unlockAfterKillDuringUpgrade},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // beside its sibling only: the parent is serial
			c.run(t)
		})
	}
}

// crashWatches is watches-unlock.yaml: a pending revision is taken as
// abandoned once it was last written longer than the action timeout, 15 s,
// ago, and that timeout bounds every action. The tests that wait it out
// after a kill stay serial: an action on their 150 ConfigMaps takes a
// second or two alone, but took up to a minute under the load of the
// parallel tests (the install timed out, and they failed); a timeout
// long enough for that load would make each wait minutes long.
func crashWatches() string {
	return filepath.Join(testenv.RepoRoot(), "test", "e2e", "testdata", "watches-unlock.yaml")
}

// crashWatchesWithTimeout is crashWatches()'s watch (same fields) with
// the action timeout set to timeout, written to a directory of the test: for a test that never
// waits it out and runs in parallel, a timeout no action of its own
// reaches under load.
func crashWatchesWithTimeout(t *testing.T, timeout time.Duration) string {
	t.Helper()
	return appWatches(t, fmt.Sprintf("  maxConcurrentReconciles: 4\n  maxHistory: 5\n"+
		"  remediation:\n    retries: 2\n    backoff: {initial: 1s, max: 2s}\n"+
		"  readiness:\n    timeout: 2m\n  timeout: %s\n", timeout))
}

// restartConfined starts an operator on watchesFile confined to ns (the
// next one, once a test stopped or killed the one before), with no
// metrics endpoint, and returns once it is ready.
func restartConfined(t *testing.T, env *testenv.Env, ns, watchesFile string) *process {
	t.Helper()
	return startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
}

// latestReleaseStatus returns the status label of the newest revision.
func latestReleaseStatus(t *testing.T, env *testenv.Env, ns, name string) string {
	t.Helper()
	best, status := 0, ""
	for _, s := range releaseSecrets(t, env, ns, name) {
		var v int
		fmt.Sscan(s.Labels["version"], &v)
		if v > best {
			best, status = v, s.Labels["status"]
		}
	}
	return status
}

// releaseSecrets lists the stored revisions of a release.
func releaseSecrets(t *testing.T, env *testenv.Env, ns, name string) []corev1.Secret {
	t.Helper()
	var secrets corev1.SecretList
	if err := env.Client.List(context.Background(), &secrets, client.InNamespace(ns), client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
		t.Fatal(err)
	}
	return secrets.Items
}

// Stopping the operator leaves the released app running, untouched: after
// the stop, until the cluster's own controllers have demonstrably acted
// (the garbage collector collected a canary; the ReplicaSet controller
// replaced a deleted Pod of the app and it became Ready), no object of the
// release and no stored revision was deleted, recreated or written (same
// UID, same resourceVersion, same generation for the Deployment, whose
// status the Pod replacement updates).
func TestAppKeepsRunningWithoutTheOperator(t *testing.T) {
	parallel(t, quick)
	env, ns, op := appFixture(t, testWatches())
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "calm", map[string]any{"replicas": 2, "configMaps": 2})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "calm", 1)
	before := releasedSnapshot(t, env, ns)
	if len(before) < 6 { // Deployment, Service, 3 ConfigMaps, 1 revision
		t.Fatalf("the release holds too little to watch: %v", before)
	}
	if err := op.interrupt(t, 30*time.Second); err != nil {
		t.Fatalf("operator exit: %v", err)
	}

	// The garbage collector acts on the namespace after the stop.
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "canary-owner"}}
	if err := env.Client.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	canary := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "canary",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}}}}
	if err := env.Client.Create(ctx, canary); err != nil {
		t.Fatal(err)
	}
	if err := env.Client.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	// The app heals without the operator: a deleted Pod is replaced and Ready.
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil || len(pods.Items) == 0 {
		t.Fatalf("the app's Pods: %d (%v)", len(pods.Items), err)
	}
	victim := pods.Items[0]
	if err := env.Client.Delete(ctx, &victim); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(canary), &corev1.ConfigMap{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("the garbage collector has not collected the canary yet (%v)", err)
		}
		var pods corev1.PodList
		if err := env.Client.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return err
		}
		ready := 0
		for _, p := range pods.Items {
			if p.UID == victim.UID {
				return fmt.Errorf("pod %s not deleted yet", p.Name)
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
					ready++
				}
			}
		}
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "calm"}, d); err != nil {
			return err
		}
		if ready != 2 || d.Status.AvailableReplicas != 2 {
			return fmt.Errorf("%d Pods Ready, %d available, want 2", ready, d.Status.AvailableReplicas)
		}
		return nil
	})

	after := releasedSnapshot(t, env, ns)
	for k, b := range before {
		if a, ok := after[k]; !ok {
			t.Errorf("%s: gone without the operator", k)
		} else if a != b {
			t.Errorf("%s: changed without the operator: %s -> %s", k, b, a)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			t.Errorf("%s: appeared without the operator", k)
		}
	}
	// Deleting the App needs an operator to remove the finalizer.
	restartConfined(t, env, ns, testWatches())
	deleteApps(t, env, ns)
}

// releasedSnapshot identifies what a release in ns holds: its Deployments
// (UID and generation: their status changes with the Pods), Services and
// ConfigMaps (UID and resourceVersion), and its stored revisions (Helm's
// Secrets, UID and resourceVersion), keyed by kind and name.
func releasedSnapshot(t *testing.T, env *testenv.Env, ns string) map[string]string {
	t.Helper()
	ctx := context.Background()
	snap := map[string]string{}
	var deps appsv1.DeploymentList
	var svcs corev1.ServiceList
	var cms corev1.ConfigMapList
	var secrets corev1.SecretList
	for _, l := range []client.ObjectList{&deps, &svcs, &cms, &secrets} {
		if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
	}
	released := func(o metav1.Object) bool { return o.GetAnnotations()["meta.helm.sh/release-name"] != "" }
	for _, d := range deps.Items {
		if released(&d) {
			snap["Deployment "+d.Name] = fmt.Sprintf("uid %s generation %d", d.UID, d.Generation)
		}
	}
	for _, s := range svcs.Items {
		if released(&s) {
			snap["Service "+s.Name] = fmt.Sprintf("uid %s rv %s", s.UID, s.ResourceVersion)
		}
	}
	for _, c := range cms.Items {
		if released(&c) {
			snap["ConfigMap "+c.Name] = fmt.Sprintf("uid %s rv %s", c.UID, c.ResourceVersion)
		}
	}
	for _, s := range secrets.Items {
		if s.Labels["owner"] == "helm" {
			snap["Secret "+s.Name] = fmt.Sprintf("uid %s rv %s status %s", s.UID, s.ResourceVersion, s.Labels["status"])
		}
	}
	return snap
}

// Objects of a release that its deployed revision does not hold (what an
// interrupted or failed revision created: Helm's next upgrade diffs
// against the last deployed revision and never sees them) are deleted;
// look-alikes that are not the release's own are left alone.
func TestLeftoversArePruned(t *testing.T) {
	parallel(t, quick)
	env, ns, _ := appFixture(t, testWatches())
	ctx := context.Background()
	if err := env.Client.Create(ctx, newApp(ns, "web", map[string]any{"configMaps": 1})); err != nil {
		t.Fatal(err)
	}
	waitReady(t, env, ns, "web", 1)
	owner := appGVK.Group + "/" + appGVK.Kind + "/" + ns + "/web"
	leftover := func(name string, annotations map[string]string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{api.LabelManaged: "true"}, Annotations: annotations}}
	}
	// As a revision killed half-way through an upgrade to 8 ConfigMaps leaves it.
	left := leftover("web-extra-7", map[string]string{api.AnnotationOwner: owner,
		"meta.helm.sh/release-name": "web", "meta.helm.sh/release-namespace": ns})
	lookalike := leftover("web-extra-8", map[string]string{api.AnnotationOwner: owner})
	for _, cm := range []*corev1.ConfigMap{lookalike, left} {
		if err := env.Client.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, time.Minute, func(ctx context.Context) error {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(left), &corev1.ConfigMap{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("the leftover is still there (%v)", err)
		}
		return nil
	})
	waitReady(t, env, ns, "web", 1)
	testenv.Eventually(t, 30*time.Second, func(ctx context.Context) error {
		for _, m := range eventMessages(ctx, t, env, ns, "web") {
			if strings.Contains(m, "deleted what earlier revisions left: ConfigMap "+ns+"/web-extra-7") {
				return nil
			}
		}
		return fmt.Errorf("no Event says what was pruned: %q", eventMessages(ctx, t, env, ns, "web"))
	})
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(lookalike), &corev1.ConfigMap{}); err != nil {
		t.Errorf("a ConfigMap Helm did not create was deleted: %v", err)
	}
	if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web-extra-0"}, &corev1.ConfigMap{}); err != nil {
		t.Errorf("the release's own ConfigMap: %v", err)
	}
}
