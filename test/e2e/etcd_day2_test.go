package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/chartkeeper/chartkeeper/internal/api"
	"github.com/chartkeeper/chartkeeper/internal/etcdcluster"
	"github.com/chartkeeper/chartkeeper/test/etcdpods"
	"github.com/chartkeeper/chartkeeper/test/framework/etcdtest"
	"github.com/chartkeeper/chartkeeper/test/testenv"
)

// etcdMembersFixture runs etcd-pods (a real etcd per EtcdCluster Pod) and
// the operator with loopback member addressing, as make run does on the
// local cluster, both confined to the test's namespace.
func etcdMembersFixture(t *testing.T) (*testenv.Env, string, *syncBuffer) {
	t.Helper()
	env := testenv.Cluster(t)
	watchesFile := filepath.Join(testenv.RepoRoot(), "watches.yaml")
	installCRDs(t, env, watchesFile)
	ns := env.Namespace(t)
	log := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	dir := t.TempDir()
	r := &etcdpods.Runner{Client: env.Clientset, EtcdBin: filepath.Join(testenv.BinDir(), "etcd"),
		ChartkeeperBin: operatorBinary(t), Dir: dir, Log: log, Namespace: ns}
	done := make(chan struct{})
	go func() { _ = r.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("etcd-pods log:\n%s", log.String())
			logMemberTails(t, dir, 40)
		}
	})
	startConfined(t, env, ns, watchesFile,
		"--metrics-bind-address", "0", "--etcd-member-addressing", "loopback")
	return env, ns, log
}

// logMemberTails logs the last lines of every member's own log (etcd's
// output, one file per Pod under dir), which say why a member exited.
func logMemberTails(t *testing.T, dir string, lines int) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		t.Logf("last %d lines of %s:\n%s", lines, filepath.Base(p), strings.Join(all[max(0, len(all)-lines):], "\n"))
	}
}

func newEtcdCluster(ns, name string, spec map[string]any) *unstructured.Unstructured {
	return newCR(etcdGVK, ns, name, spec)
}

// waitEtcd waits until the EtcdCluster is Ready for its generation, its hook
// reports phase Running, health Healthy and size members, and check passes.
func waitEtcd(t *testing.T, env *testenv.Env, ns, name string, size int, timeout time.Duration) api.Status {
	t.Helper()
	var st api.Status
	testenv.Eventually(t, timeout, func(ctx context.Context) error {
		u, s, err := getCR(ctx, env, etcdGVK, ns, name)
		if err != nil {
			return err
		}
		st = s
		ready := condition(s, api.ConditionReady)
		members, _ := s.App["members"].([]any)
		if ready.Status != metav1.ConditionTrue || s.ObservedGeneration != u.GetGeneration() ||
			s.App["phase"] != "Running" || s.App["health"] != "Healthy" || len(members) != size || s.App["leader"] == "" {
			return fmt.Errorf("Ready %s (%s), generation %d/%d, status.app phase %v health %v members %d leader %v: %v",
				ready.Status, ready.Message, s.ObservedGeneration, u.GetGeneration(), s.App["phase"], s.App["health"], len(members), s.App["leader"], s.App["message"])
		}
		return nil
	})
	return st
}

func etcdClient(t *testing.T, ns, name string, n int) *clientv3.Client {
	t.Helper()
	addr := etcdcluster.Loopback{Name: name, Namespace: ns}
	var eps []string
	for i := range n {
		eps = append(eps, addr.ClientURL(i))
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func keysOn(t *testing.T, ns, name string, ordinal int, prefix string) int64 {
	t.Helper()
	addr := etcdcluster.Loopback{Name: name, Namespace: ns}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{addr.ClientURL(ordinal)}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithSerializable())
	if err != nil {
		t.Fatalf("reading member %d: %v", ordinal, err)
	}
	return resp.Count
}

// TestEtcdClusterDay2OnRealMembers drives the bundled EtcdCluster through
// the operator with a real etcd process behind every Pod: create, scale
// 3 -> 5 -> 3, upgrade, back up on request to an S3 API on 127.0.0.1, and
// restore into a new EtcdCluster, checking the data at each step.
func TestEtcdClusterDay2OnRealMembers(t *testing.T) {
	parallel(t, 90*time.Second)
	env, ns, _ := etcdMembersFixture(t)
	ctx := context.Background()
	endpoint := etcdtest.S3(t, "etcd-backups")
	creds := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s3-credentials"},
		StringData: map[string]string{"accessKeyID": "dev", "secretAccessKey": "dev-secret"}}
	if err := env.Client.Create(ctx, creds); err != nil {
		t.Fatal(err)
	}
	s3 := map[string]any{"endpoint": endpoint, "bucket": "etcd-backups", "insecure": true, "credentialsSecret": "s3-credentials"}
	cr := newEtcdCluster(ns, "db", map[string]any{"size": int64(3), "version": "3.6.16", "backup": map[string]any{"s3": s3}})
	if err := env.Client.Create(ctx, cr); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteEtcdClusters(t, env, ns) })
	begin := time.Now()
	waitEtcd(t, env, ns, "db", 3, 3*time.Minute)
	t.Logf("3 members healthy after %s", time.Since(begin).Round(time.Second))

	c := etcdClient(t, ns, "db", 3)
	for i := range 50 {
		if _, err := c.Put(ctx, fmt.Sprintf("/data/%03d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}

	// Scale 3 -> 5 -> 3.
	for _, size := range []int{5, 3} {
		begin = time.Now()
		mergePatch(t, env, cr, fmt.Sprintf(`{"spec":{"size":%d}}`, size))
		waitEtcd(t, env, ns, "db", size, 4*time.Minute)
		sts := &appsv1.StatefulSet{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db"}, sts); err != nil || int(*sts.Spec.Replicas) != size {
			t.Fatalf("StatefulSet after scaling to %d: %v %v", size, sts.Spec.Replicas, err)
		}
		for i := range size {
			if n := keysOn(t, ns, "db", i, "/data/"); n != 50 {
				t.Errorf("member %d has %d of 50 keys at size %d", i, n, size)
			}
		}
		t.Logf("scaled to %d in %s", size, time.Since(begin).Round(time.Second))
	}

	// Lose member 1's volume: its claim and Pod go, the StatefulSet makes
	// new ones, the empty member cannot rejoin as itself; the hook removes
	// it and adds it back, and it catches up.
	oldID := memberID(t, waitEtcd(t, env, ns, "db", 3, time.Minute), "db-1")
	begin = time.Now()
	for _, obj := range []client.Object{
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "data-db-1"}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db-1"}},
	} {
		if err := env.Client.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, 3*time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, etcdGVK, ns, "db")
		if err != nil {
			return err
		}
		if id := memberID(t, s, "db-1"); id == oldID || id == "" {
			return fmt.Errorf("db-1 has ID %q (was %s): %v %v", id, oldID, s.App["phase"], s.App["message"])
		}
		return nil
	})
	waitEtcd(t, env, ns, "db", 3, 2*time.Minute)
	if n := keysOn(t, ns, "db", 1, "/data/"); n != 50 {
		t.Errorf("the replaced member has %d of 50 keys", n)
	}
	t.Logf("member with a lost volume replaced in %s", time.Since(begin).Round(time.Second))

	// Upgrade: one Pod at a time through the partition.
	before := waitEtcd(t, env, ns, "db", 3, time.Minute)
	begin = time.Now()
	mergePatch(t, env, cr, `{"spec":{"version":"3.7.0"}}`)
	testenv.Eventually(t, 4*time.Minute, func(ctx context.Context) error {
		sts := &appsv1.StatefulSet{}
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: "db"}, sts); err != nil {
			return err
		}
		p := sts.Spec.UpdateStrategy.RollingUpdate.Partition
		if sts.Labels["app.kubernetes.io/version"] != "3.7.0" || p == nil || *p != 0 || sts.Status.UpdatedReplicas != 3 {
			return fmt.Errorf("StatefulSet version %s partition %v updated %d", sts.Labels["app.kubernetes.io/version"], p, sts.Status.UpdatedReplicas)
		}
		return nil
	})
	after := waitEtcd(t, env, ns, "db", 3, 2*time.Minute)
	// Partition 2, then 1, then 0: a release revision each, never all at once.
	if steps := after.Release.Revision - before.Release.Revision; steps < 3 {
		t.Errorf("the upgrade took %d release revision(s) (%d -> %d), want one per Pod (3)", steps, before.Release.Revision, after.Release.Revision)
	}
	t.Logf("upgraded in %s, revisions %d -> %d", time.Since(begin).Round(time.Second), before.Release.Revision, after.Release.Revision)

	// Back up on request.
	begin = time.Now()
	mergePatch(t, env, cr, `{"metadata":{"annotations":{"`+etcdcluster.BackupAnnotation+`":"first"}}}`)
	var key string
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		_, s, err := getCR(ctx, env, etcdGVK, ns, "db")
		if err != nil {
			return err
		}
		lb, _ := s.App["lastBackup"].(map[string]any)
		if lb["trigger"] != "request first" || lb["keys"] == nil {
			return fmt.Errorf("lastBackup %v (error %v)", lb, s.App["backupError"])
		}
		key, _ = lb["key"].(string)
		return nil
	})
	if !strings.HasPrefix(key, ns+"/db/") {
		t.Fatalf("backup key %q", key)
	}
	t.Logf("backup %s taken in %s", key, time.Since(begin).Round(time.Second))

	// Restore into a new cluster, which grows to 3 members from the seed.
	begin = time.Now()
	restored := newEtcdCluster(ns, "db-restored", map[string]any{"size": int64(3), "version": "3.6.16",
		"restore": map[string]any{"backup": key, "s3": s3}})
	if err := env.Client.Create(ctx, restored); err != nil {
		t.Fatal(err)
	}
	waitEtcd(t, env, ns, "db-restored", 3, 4*time.Minute)
	for i := range 3 {
		if n := keysOn(t, ns, "db-restored", i, "/data/"); n != 50 {
			t.Errorf("restored member %d has %d of 50 keys", i, n)
		}
	}
	t.Logf("restored into a new 3-member cluster in %s", time.Since(begin).Round(time.Second))
}

// memberID is the etcd member ID status.app reports for a member name.
func memberID(t *testing.T, st api.Status, name string) string {
	members, _ := st.App["members"].([]any)
	for _, m := range members {
		if mm, _ := m.(map[string]any); mm["name"] == name {
			id, _ := mm["id"].(string)
			return id
		}
	}
	return ""
}

// mergePatch applies a JSON merge patch to obj.
func mergePatch(t *testing.T, env *testenv.Env, obj client.Object, patch string) {
	t.Helper()
	if err := env.Client.Patch(context.Background(), obj, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		t.Fatal(err)
	}
}

// deleteEtcdClusters deletes the namespace's EtcdClusters while the
// operator still runs, and waits for them to go.
func deleteEtcdClusters(t *testing.T, env *testenv.Env, ns string) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(etcdGVK.GroupVersion().WithKind("EtcdClusterList"))
	_ = env.Client.List(context.Background(), list, client.InNamespace(ns))
	for i := range list.Items {
		_ = env.Client.Delete(context.Background(), &list.Items[i])
	}
	testenv.Eventually(t, 2*time.Minute, func(ctx context.Context) error {
		if err := env.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return err
		}
		if len(list.Items) > 0 {
			return fmt.Errorf("%d EtcdClusters left", len(list.Items))
		}
		return nil
	})
}
