package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/test/peers/osdk"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// The predecessors' own releases are taken over (issue 55): operator-sdk's
// Helm operator and helm-operator-plugins (with Helm's Secret driver, and
// with its chunked driver as library users run it) install and upgrade
// resources, stop, and chartkeeper starts with the same watches.yaml.

// peerSpec is a resource's spec: the app chart with one extra ConfigMap
// and data (the content of its ConfigMaps) set to marker.
func peerSpec(marker string) map[string]any {
	return map[string]any{"configMaps": 1, "data": marker}
}

// takeOver starts chartkeeper on the predecessor's resources in ns and
// checks the takeover: each resource Ready at revision rev with no new
// revision, every released object the same (UIDs); then a spec change of
// names[0] is released as revision rev+1, and deleting names[1]
// uninstalls its release and lets the resource go within a minute. It
// returns chartkeeper's process, running.
func takeOver(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, watchesFile string, names []string, rev int) *process {
	t.Helper()
	before := releasedUIDs(t, env, ns)
	if len(before) < 3*len(names) {
		t.Fatalf("the predecessor released %d objects for %d resources: %v", len(before), len(names), before)
	}
	ck := startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{gvk}) }) // while chartkeeper runs
	waitTakenOver(t, env, gvk, ns, names, rev)
	sameUIDs(t, env, ns, before)

	patchCR(t, env, gvk, ns, names[0], peerSpec("changed"))
	waitCRRevision(t, env, gvk, ns, names[0], rev+1)
	var cm corev1.ConfigMap
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: names[0] + "-config"}, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["data"] != "changed" {
		t.Errorf("after the spec change %s-config holds %q, want %q", names[0], cm.Data["data"], "changed")
	}
	sameUIDs(t, env, ns, before)

	deleteAndWaitUninstalled(t, env, gvk, ns, names[1])
	return ck
}

// operator-sdk's Helm operator (its layout reproduced by test/peers/osdk:
// its module cannot be fetched here) installed and upgraded three
// resources; chartkeeper takes them over.
func TestTakeOverFromOperatorSDK(t *testing.T) {
	parallel(t, 45*time.Second)
	env, gvk, ns := peerFixture(t, "SdkApp")
	watchesFile := peerWatches(t, gvk, "")
	sdk, err := osdk.New(env.Kubeconfig, gvk, peerChart())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	names := []string{"alpha", "beta", "gamma"}
	for _, name := range names {
		if err := env.Client.Create(ctx, newCR(gvk, ns, name, peerSpec("v1"))); err != nil {
			t.Fatal(err)
		}
		if act, err := sdk.Reconcile(ctx, ns, name); err != nil || act != osdk.Installed {
			t.Fatalf("operator-sdk's reconcile of %s: %s, %v", name, act, err)
		}
		patchCR(t, env, gvk, ns, name, peerSpec("v2"))
		if act, err := sdk.Reconcile(ctx, ns, name); err != nil || act != osdk.Upgraded {
			t.Fatalf("operator-sdk's reconcile of %s after a spec change: %s, %v", name, act, err)
		}
		checkOSDKLayout(t, env, gvk, ns, name)
	}
	takeOver(t, env, gvk, ns, watchesFile, names, 2)
}

// checkOSDKLayout checks what test/peers/osdk left, as operator-sdk leaves
// it: two revisions, each Secret owned by the resource, the finalizer, the
// status.
func checkOSDKLayout(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns, name string) {
	t.Helper()
	u, _, err := getCR(context.Background(), env, gvk, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(u.GetFinalizers(), osdk.Finalizer) {
		t.Fatalf("%s: finalizers %v, want %s", name, u.GetFinalizers(), osdk.Finalizer)
	}
	st := osdk.StatusOf(u)
	if c := st.Condition(osdk.ConditionDeployed); c == nil || c.Status != "True" || c.Reason != osdk.ReasonUpgradeSuccessful {
		t.Fatalf("%s: status %+v, want Deployed True UpgradeSuccessful", name, st.Conditions)
	}
	secrets := releaseSecrets(t, env, ns, name)
	if len(secrets) != 2 {
		t.Fatalf("%s: %d release Secrets, want 2", name, len(secrets))
	}
	for _, s := range secrets {
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != u.GetUID() || !*s.OwnerReferences[0].Controller {
			t.Fatalf("%s: release Secret %s owned by %+v", name, s.Name, s.OwnerReferences)
		}
	}
}

// helm-operator-plugins' reconciler with its chunked storage driver, as a
// library user runs it (test/peers/hopchunked, 1 KiB chunks: each
// revision is an index and chunk Secrets), installed and upgraded two
// resources; chartkeeper, whose watch says storage: chunked, takes them
// over.
func TestTakeOverChunkedFromHelmOperatorPlugins(t *testing.T) {
	parallel(t, 45*time.Second)
	env, gvk, ns := peerFixture(t, "ChunkedApp")
	watchesFile := peerWatches(t, gvk, "  storage: chunked\n")
	names := []string{"alpha", "beta"}
	hop := startPeer(t, env, ns, buildBinary(t, "./test/peers/hopchunked"), "--watches-file", watchesFile, "--chunk-size", "1024")
	installAndUpgradeWithPeer(t, env, hop, gvk, ns, names)
	for _, name := range names {
		checkChunked(t, env, ns, name, true)
	}
	stopProcess(t, hop)
	takeOver(t, env, gvk, ns, watchesFile, names, 2)
	checkChunked(t, env, ns, names[0], false) // revision 3, chartkeeper's (its chunks are 512 KiB)
}

// installAndUpgradeWithPeer creates the resources with a running
// predecessor, waits until it deployed each, changes each spec and waits
// until it upgraded each (revision 2), and checks its log has no error.
func installAndUpgradeWithPeer(t *testing.T, env *testenv.Env, peer *process, gvk schema.GroupVersionKind, ns string, names []string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range names {
		if err := env.Client.Create(ctx, newCR(gvk, ns, name, peerSpec("v1"))); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		waitPeerDeployed(t, env, peer, gvk, ns, name, "v1", 1)
		patchCR(t, env, gvk, ns, name, peerSpec("v2"))
	}
	for _, name := range names {
		waitPeerDeployed(t, env, peer, gvk, ns, name, "v2", 2)
	}
	if errs := logErrors(peer.out.String()); len(errs) > 0 {
		t.Fatalf("%s logged errors:\n%s", peer.cmd.Args[0], strings.Join(errs, "\n"))
	}
}

// waitPeerDeployed waits until a predecessor reports the resource
// Deployed with data marker in its deployed manifest, its release at one
// of revs (revisions 1 to it stored, it the last, deployed), and returns
// that revision.
func waitPeerDeployed(t *testing.T, env *testenv.Env, peer *process, gvk schema.GroupVersionKind, ns, name, marker string, revs ...int) int {
	t.Helper()
	var at int
	peer.eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, _, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			return err
		}
		st := osdk.StatusOf(u) // helm-operator-plugins' status has operator-sdk's shape
		c := st.Condition(osdk.ConditionDeployed)
		if c == nil || c.Status != "True" || st.DeployedRelease == nil || !holdsData(st.DeployedRelease.Manifest, marker) {
			return fmt.Errorf("%s not deployed with data %q: %+v", name, marker, st.Conditions)
		}
		for _, bad := range []osdk.ConditionType{osdk.ConditionIrreconcilable, osdk.ConditionReleaseFailed} {
			if c := st.Condition(bad); c != nil && c.Status == "True" {
				return fmt.Errorf("%s: %s %s: %s", name, bad, c.Reason, c.Message)
			}
		}
		stored := map[string]string{} // version -> status
		for _, s := range releaseSecrets(t, env, ns, name) {
			stored[s.Labels["version"]] = s.Labels["status"]
		}
		for _, rev := range revs {
			if slices.Equal(slices.Sorted(maps.Keys(stored)), revisionList(rev)) && stored[fmt.Sprint(rev)] == "deployed" {
				at = rev
				return nil
			}
		}
		return fmt.Errorf("%s: stored revisions %v, want 1 to one of %v, the last deployed", name, stored, revs)
	})
	return at
}

// holdsData says whether a manifest has a ConfigMap data entry "data" of
// marker (as the chart renders it, or as helm-operator-plugins stores it
// after its post-renderer re-serialised it).
func holdsData(manifest, marker string) bool {
	return strings.Contains(manifest, fmt.Sprintf("data: %q\n", marker)) || strings.Contains(manifest, fmt.Sprintf("data: %s\n", marker))
}

// checkChunked checks that the release's latest revision is stored in
// helm-operator-plugins' chunked format, over more than one Secret if
// chunks.
func checkChunked(t *testing.T, env *testenv.Env, ns, name string, chunks bool) {
	t.Helper()
	secrets := releaseSecrets(t, env, ns, name)
	if len(secrets) == 0 {
		t.Fatalf("%s: no release Secrets", name)
	}
	latest := slices.MaxFunc(secrets, func(a, b corev1.Secret) int { return strings.Compare(a.Labels["version"], b.Labels["version"]) })
	if latest.Type != "operatorframework.io/index.v1" {
		t.Fatalf("%s: revision %s stored as %s, want a chunked index", name, latest.Labels["version"], latest.Type)
	}
	if !chunks {
		return
	}
	var list corev1.SecretList
	if err := env.Client.List(context.Background(), &list, client.InNamespace(ns), client.MatchingLabels{"key": latest.Name, "type": "chunk"}); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) == 0 {
		t.Errorf("%s: revision %s has no chunk Secrets", name, latest.Labels["version"])
	}
}

// Back out: after chartkeeper took over helm-operator-plugins' releases,
// upgraded one and installed a new resource's, chartkeeper stops, its
// finalizer is removed from the kind's resources (the documented back-out
// step: helm-operator does not know it), and helm-operator-plugins starts
// again with the same watches.yaml. It reconciles without errors, keeps
// every resource Deployed, nothing recreated, upgrades on the next spec
// change, and deleted resources are uninstalled and go. Switching to
// chartkeeper once more, a resource is Ready again, nothing recreated.
// What chartkeeper left behind is logged (docs/migrating.md).
func TestBackOutToHelmOperatorPlugins(t *testing.T) {
	parallel(t, 60*time.Second)
	env, gvk, ns := peerFixture(t, "HopApp")
	watchesFile := peerWatches(t, gvk, "")
	names := []string{"alpha", "beta"}
	hopBin := helmOperatorBinary(t)
	hop := startPeer(t, env, ns, hopBin, "run", "--watches-file", watchesFile)
	installAndUpgradeWithPeer(t, env, hop, gvk, ns, names)
	stopProcess(t, hop)

	ck := startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
	waitTakenOver(t, env, gvk, ns, names, 2)
	patchCR(t, env, gvk, ns, names[0], peerSpec("v3"))
	ctx := context.Background()
	if err := env.Client.Create(ctx, newCR(gvk, ns, "gamma", peerSpec("new"))); err != nil {
		t.Fatal(err)
	}
	waitCRRevision(t, env, gvk, ns, names[0], 3)
	waitCRRevision(t, env, gvk, ns, "gamma", 1)
	stopProcess(t, ck)
	all := append(slices.Clone(names), "gamma")
	logLeftBehind(t, env, gvk, ns, all)
	before := releasedUIDs(t, env, ns)
	// A taken-over resource keeps only helm-operator's finalizer, which
	// served as chartkeeper's: nothing to remove by hand. A resource made
	// under chartkeeper carries chartkeeper's, removed as docs/migrating.md
	// says.
	for _, name := range names {
		u, _, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(u.GetFinalizers(), api.Finalizer) {
			t.Errorf("%s was taken over, yet carries %s beside %v", name, api.Finalizer, u.GetFinalizers())
		}
	}
	removeChartkeeperFinalizer(t, env, gvk, ns, []string{"gamma"})

	hop = startPeer(t, env, ns, hopBin, "run", "--watches-file", watchesFile)
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{gvk}) }) // while helm-operator runs
	// It reconciles the revisions chartkeeper made as deployed (its first
	// reconcile may upgrade them: helm-operator's post-renderer writes
	// owner references into the manifests it stores, chartkeeper's
	// revisions have none), and names[1]'s revision 2, its own, that
	// chartkeeper took over in place.
	if rev := waitPeerDeployed(t, env, hop, gvk, ns, names[0], "v3", 3, 4); rev == 4 {
		t.Logf("helm-operator upgraded %s's revision 3, chartkeeper's, to revision 4 with the same values", names[0])
	}
	if rev := waitPeerDeployed(t, env, hop, gvk, ns, "gamma", "new", 1, 2); rev == 2 {
		t.Logf("helm-operator upgraded gamma's revision 1, chartkeeper's, to revision 2 with the same values")
	}
	waitPeerDeployed(t, env, hop, gvk, ns, names[1], "v2", 2)
	patchCR(t, env, gvk, ns, names[1], peerSpec("back"))
	waitPeerDeployed(t, env, hop, gvk, ns, names[1], "back", 3)
	sameUIDs(t, env, ns, before)
	if errs := logErrors(hop.out.String()); len(errs) > 0 {
		t.Errorf("helm-operator logged errors after the back-out:\n%s", strings.Join(errs, "\n"))
	}
	t.Logf("once helm-operator reconciled after the back-out:")
	logLeftBehind(t, env, gvk, ns, names[1:])

	for _, name := range []string{names[0], "gamma"} {
		if err := env.Client.Delete(ctx, newCR(gvk, ns, name, nil)); err != nil {
			t.Fatal(err)
		}
		hop.eventually(t, time.Minute, func(ctx context.Context) error {
			u, _, err := getCR(ctx, env, gvk, ns, name)
			if err == nil {
				return fmt.Errorf("%s is still there, finalizers %v", name, u.GetFinalizers())
			}
			if left, err := storageLeft(ctx, env, ns, name); err != nil || len(left) > 0 {
				return fmt.Errorf("%s is gone, its release's Secrets are left: %v (%v)", name, left, err)
			}
			return client.IgnoreNotFound(err)
		})
	}

	// Switching to chartkeeper once more: names[1], at helm-operator's
	// revision 3, is Ready again, nothing recreated. Revision 3 carries the
	// labels chartkeeper put on revision 2 (Helm's upgrade keeps a
	// revision's custom labels), so chartkeeper does not take it over as a
	// predecessor's but upgrades it back to the desired values: revision 4.
	stopProcess(t, hop)
	before = releasedUIDs(t, env, ns)
	startConfined(t, env, ns, watchesFile, "--metrics-bind-address", "0")
	t.Cleanup(func() { deleteAll(t, env, ns, []schema.GroupVersionKind{gvk}) }) // while chartkeeper runs
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		u, st, err := getCR(ctx, env, gvk, ns, names[1])
		if err != nil {
			return err
		}
		if c := condition(st, api.ConditionReady); c.Status != metav1.ConditionTrue || st.ObservedGeneration != u.GetGeneration() || st.Release == nil || st.Release.Revision < 3 {
			return fmt.Errorf("%s not Ready at revision 3 or later: release %+v, conditions %+v", names[1], st.Release, st.Conditions)
		}
		t.Logf("switched to chartkeeper again: %s Ready at revision %d (%s)", names[1], st.Release.Revision, condition(st, api.ConditionReleased).Reason)
		return nil
	})
	sameUIDs(t, env, ns, before)
}

// removeChartkeeperFinalizer removes chartkeeper's finalizer from the
// resources, as a person backing out does with kubectl (a JSON patch that
// tests it is where it was read), and logs which carried it.
func removeChartkeeperFinalizer(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns string, names []string) {
	t.Helper()
	ctx := context.Background()
	var had []string
	for _, name := range names {
		u, _, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.Index(u.GetFinalizers(), api.Finalizer)
		if i < 0 {
			continue
		}
		had = append(had, name)
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, api.Finalizer, i)
		if err := env.Client.Patch(ctx, u, client.RawPatch(types.JSONPatchType, []byte(patch))); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("removed %s from %v (of %v)", api.Finalizer, had, names)
}

// logLeftBehind logs what chartkeeper leaves on the resources and their
// release Secrets when it stops: labels and annotations of its own, its
// finalizer, its status fields and conditions.
func logLeftBehind(t *testing.T, env *testenv.Env, gvk schema.GroupVersionKind, ns string, names []string) {
	t.Helper()
	ctx := context.Background()
	for _, name := range names {
		u, _, err := getCR(ctx, env, gvk, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		var conds []string
		st, _, _ := unstructured.NestedMap(u.Object, "status")
		if cs, ok := st["conditions"].([]any); ok {
			for _, c := range cs {
				if m, ok := c.(map[string]any); ok {
					conds = append(conds, fmt.Sprintf("%v=%v(%v)", m["type"], m["status"], m["reason"]))
				}
			}
		}
		keys := slices.Sorted(maps.Keys(st))
		t.Logf("left on %s %s: finalizers %v; labels %v; annotations %v; status fields %v; conditions %v",
			gvk.Kind, name, u.GetFinalizers(), ours(u.GetLabels()), ours(u.GetAnnotations()), keys, conds)
		for _, s := range releaseSecrets(t, env, ns, name) {
			t.Logf("left on %s's release Secret %s (status %s): labels %v; annotations %v; owners %d",
				name, s.Name, s.Labels["status"], ours(s.Labels), ours(s.Annotations), len(s.OwnerReferences))
		}
	}
}

// ours keeps the chartkeeper.dev/ keys of a map.
func ours(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if strings.HasPrefix(k, api.Prefix) {
			if len(v) > 40 {
				v = v[:40] + "..."
			}
			out[k] = v
		}
	}
	return out
}
