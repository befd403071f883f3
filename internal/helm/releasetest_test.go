package helm

import (
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/resource"
	k8sfake "k8s.io/client-go/kubernetes/fake"
)

// hookKube is a fake kube client that knows objects by the name in their
// manifest: it records what is created and deleted, and fails the wait
// for the objects named in fail.
type hookKube struct {
	kubefake.PrintingKubeClient
	fail             map[string]bool
	created, deleted []string
}

var manifestName = regexp.MustCompile(`name: (\S+)`)

func (k *hookKube) Build(r io.Reader, _ bool) (kube.ResourceList, error) {
	b, _ := io.ReadAll(r)
	m := manifestName.FindStringSubmatch(string(b))
	if m == nil {
		return nil, errors.New("no name")
	}
	return kube.ResourceList{&resource.Info{Name: m[1], Namespace: "ns"}}, nil
}

func (k *hookKube) Create(rl kube.ResourceList) (*kube.Result, error) {
	k.created = append(k.created, rl[0].Name)
	return &kube.Result{Created: rl}, nil
}

func (k *hookKube) Delete(rl kube.ResourceList) (*kube.Result, []error) {
	k.deleted = append(k.deleted, rl[0].Name)
	return &kube.Result{Deleted: rl}, nil
}

func (k *hookKube) WatchUntilReady(rl kube.ResourceList, _ time.Duration) error {
	if k.fail[rl[0].Name] {
		return errors.New("pod " + rl[0].Name + " failed")
	}
	return nil
}

func testHook(name string, weight int, events ...release.HookEvent) *release.Hook {
	return &release.Hook{Name: name, Kind: "Pod", Weight: weight, Events: events, Path: "templates/tests/" + name + ".yaml",
		Manifest:       "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n",
		DeletePolicies: []release.HookDeletePolicy{release.HookBeforeHookCreation}}
}

// Test runs the test hooks by weight, then name, stops at the first that
// fails, says why a failed Pod failed (read before it is deleted), deletes
// every test hook that ran and records the run in the release; a release
// without test hooks is tested without a write.
func TestTest(t *testing.T) {
	failedPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-test-db", Namespace: "ns"},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "psql", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				Reason: "Error", ExitCode: 2, Message: "connecting\npsql: error: connection refused\n"}}},
			{Name: "sidecar", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Completed"}}},
		}}}
	tests := []struct {
		name    string
		hooks   []*release.Hook
		fail    map[string]bool
		wantErr string
		want    string // "kind name phase why" per test, "|"-separated
		created string
		deleted string
	}{
		{name: "no test hooks", hooks: []*release.Hook{testHook("web-migrate", 0, release.HookPreInstall)}},
		{name: "every test passes", hooks: []*release.Hook{
			testHook("web-test-http", 0, release.HookTest), testHook("web-test-db", -1, release.HookTest), testHook("web-migrate", 0, release.HookPreUpgrade)},
			want:    "Pod web-test-db Succeeded |Pod web-test-http Succeeded ",
			created: "web-test-db web-test-http", deleted: "web-test-db web-test-http web-test-db web-test-http"},
		{name: "the first failure ends the run", hooks: []*release.Hook{
			testHook("web-test-http", 0, release.HookTest), testHook("web-test-db", -1, release.HookTest)},
			fail:    map[string]bool{"web-test-db": true},
			wantErr: "pod web-test-db failed",
			want:    "Pod web-test-db Failed phase Failed; container psql: Error, exit code 2: connecting\npsql: error: connection refused|Pod web-test-http  ",
			created: "web-test-db", deleted: "web-test-db web-test-db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := storage.Init(driver.NewMemory())
			if err := st.Create(&release.Release{Name: "web", Namespace: "ns", Version: 3, Info: &release.Info{Status: release.StatusDeployed}, Hooks: tt.hooks}); err != nil {
				t.Fatal(err)
			}
			kc := &hookKube{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}, fail: tt.fail}
			c := NewOffline(st, kc)
			c.clientset = k8sfake.NewClientset(failedPod)
			run, err := c.Test(context.Background(), "web", "ns", Guard{Timeout: time.Minute})
			if got := errString(err); !strings.Contains(got, tt.wantErr) || (tt.wantErr == "") != (err == nil) {
				t.Errorf("error %q, want %q", got, tt.wantErr)
			}
			if run.Revision != 3 || run.Cleanup != nil {
				t.Errorf("run of revision %d, cleanup %v", run.Revision, run.Cleanup)
			}
			var got []string
			for _, h := range run.Tests {
				got = append(got, h.Kind+" "+h.Name+" "+string(h.Phase)+" "+h.Why)
			}
			if g := strings.Join(got, "|"); g != tt.want {
				t.Errorf("tests\n got %q\nwant %q", g, tt.want)
			}
			// Helm deletes each before creating it (before-hook-creation), then the run deletes those that ran.
			if c, d := strings.Join(kc.created, " "), strings.Join(kc.deleted, " "); c != tt.created || d != tt.deleted {
				t.Errorf("created %q deleted %q, want %q and %q", c, d, tt.created, tt.deleted)
			}
			rel, _ := st.Get("web", 3)
			for _, h := range rel.Hooks {
				if ran := !h.LastRun.StartedAt.IsZero(); ran != strings.Contains(tt.created, h.Name) {
					t.Errorf("hook %s recorded as run: %v", h.Name, ran)
				}
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestPodFailure(t *testing.T) {
	long := strings.Repeat("x", 100) + "\n" + strings.Repeat("log line\n", 100) + "the end"
	tests := []struct {
		name string
		pod  corev1.PodStatus
		want string
	}{
		{"evicted", corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "low on memory"}, "phase Failed (Evicted: low on memory)"},
		{"image not pulled", corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "wget", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "busybox:nope not found"}}}}},
			"phase Pending; container wget waiting: ImagePullBackOff: busybox:nope not found"},
		{"an init container failed", corev1.PodStatus{Phase: corev1.PodFailed, InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "wait-db", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}}},
			"phase Failed; container wait-db: Error, exit code 1"},
		{"a long message keeps its end", corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{
			{Name: "t", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1, Message: long}}}}},
			"phase Failed; container t: Error, exit code 1: …" + strings.Repeat("log line\n", 56) + "the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := podFailure(&corev1.Pod{Status: tt.pod}); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
