package readiness

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func pods(t *testing.T, docs ...string) []corev1.Pod {
	t.Helper()
	out := make([]corev1.Pod, len(docs))
	for i, d := range docs {
		if err := yaml.UnmarshalStrict([]byte(d), &out[i]); err != nil {
			t.Fatalf("pod %d: %v", i, err)
		}
	}
	return out
}

func claim(name, phase string) corev1.PersistentVolumeClaim {
	c := corev1.PersistentVolumeClaim{Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.PersistentVolumeClaimPhase(phase)}}
	c.Name, c.Namespace = name, "ns"
	return c
}

const unschedulable = `metadata: {name: db-0, namespace: ns}
spec: {containers: [{name: db}], volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]}
status:
  phase: Pending
  conditions:
  - type: PodScheduled
    status: "False"
    reason: Unschedulable
    message: "0/3 nodes are available: 3 Insufficient ephemeral-storage.\n preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."`

func TestPodReason(t *testing.T) {
	long := strings.Repeat("node-x didn't match Pod's node affinity/selector. ", 40)
	cases := []struct {
		name   string
		pods   []string
		claims []corev1.PersistentVolumeClaim
		want   string
	}{
		{name: "no pods", want: ""},
		{
			name: "running and ready",
			pods: []string{`metadata: {name: web-1}
status: {phase: Running, conditions: [{type: PodScheduled, status: "True"}, {type: Ready, status: "True"}],
  containerStatuses: [{name: web, ready: true, image: "", imageID: "", restartCount: 0, state: {running: {}}}]}`},
			want: "",
		},
		{
			name:   "unschedulable, the scheduler's message on one line",
			pods:   []string{unschedulable},
			claims: []corev1.PersistentVolumeClaim{claim("data-db-0", "Bound")},
			want: "Pod db-0: PodScheduled=False: Unschedulable: 0/3 nodes are available: 3 Insufficient ephemeral-storage. " +
				"preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
		},
		{
			name: "unschedulable with its claim unbound",
			pods: []string{`metadata: {name: db-0, namespace: ns}
spec: {containers: [{name: db}], volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable,
  message: "0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims."}]}`},
			claims: []corev1.PersistentVolumeClaim{claim("data-db-0", "Pending")},
			want: "Pod db-0: PodScheduled=False: Unschedulable: 0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims. " +
				"(PersistentVolumeClaim data-db-0 is Pending, not bound)",
		},
		{
			name: "a claim not bound before the scheduler looked",
			pods: []string{`metadata: {name: db-0, namespace: ns}
spec: {containers: [{name: db}], volumes: [{name: cfg, configMap: {name: c}}, {name: data, persistentVolumeClaim: {claimName: data-db-0}}]}
status: {phase: Pending}`},
			claims: []corev1.PersistentVolumeClaim{claim("data-db-0", "Lost")},
			want:   "Pod db-0: PersistentVolumeClaim data-db-0 is Lost, not bound",
		},
		{
			name: "a claim of another namespace is not the Pod's",
			pods: []string{`metadata: {name: db-0, namespace: other}
spec: {containers: [{name: db}], volumes: [{name: data, persistentVolumeClaim: {claimName: data-db-0}}]}
status: {phase: Pending}`},
			claims: []corev1.PersistentVolumeClaim{claim("data-db-0", "Pending")},
			want:   "",
		},
		{
			name: "image pull back-off",
			pods: []string{`metadata: {name: web-abc}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "True"}],
  containerStatuses: [{name: web, ready: false, image: "", imageID: "", restartCount: 0,
    state: {waiting: {reason: ImagePullBackOff, message: "Back-off pulling image \"registry.example/web:9.9\""}}}]}`},
			want: `Pod web-abc: container web: ImagePullBackOff: Back-off pulling image "registry.example/web:9.9"`,
		},
		{
			name: "err image pull",
			pods: []string{`metadata: {name: web-abc}
status: {phase: Pending, containerStatuses: [{name: web, ready: false, image: "", imageID: "", restartCount: 0,
  state: {waiting: {reason: ErrImagePull, message: "manifest unknown"}}}]}`},
			want: "Pod web-abc: container web: ErrImagePull: manifest unknown",
		},
		{
			name: "crash loop, with the last exit",
			pods: []string{`metadata: {name: web-abc}
status: {phase: Running, containerStatuses: [{name: web, ready: false, image: "", imageID: "", restartCount: 4,
  state: {waiting: {reason: CrashLoopBackOff, message: "back-off 40s restarting failed container=web"}},
  lastState: {terminated: {exitCode: 1, reason: Error}}}]}`},
			want: "Pod web-abc: container web: CrashLoopBackOff: back-off 40s restarting failed container=web (last exit code 1, Error)",
		},
		{
			name: "an init container first",
			pods: []string{`metadata: {name: web-abc}
status: {phase: Pending,
  initContainerStatuses: [{name: migrate, ready: false, image: "", imageID: "", restartCount: 2, state: {waiting: {reason: CrashLoopBackOff}}}],
  containerStatuses: [{name: web, ready: false, image: "", imageID: "", restartCount: 0, state: {waiting: {reason: PodInitializing}}}]}`},
			want: "Pod web-abc: init container migrate: CrashLoopBackOff",
		},
		{
			name: "a config error names what is missing",
			pods: []string{`metadata: {name: web-abc}
status: {phase: Pending, containerStatuses: [{name: web, ready: false, image: "", imageID: "", restartCount: 0,
  state: {waiting: {reason: CreateContainerConfigError, message: "secret \"web-tls\" not found"}}}]}`},
			want: `Pod web-abc: container web: CreateContainerConfigError: secret "web-tls" not found`,
		},
		{
			name: "starting up is no reason",
			pods: []string{`metadata: {name: web-abc}
status: {phase: Pending, containerStatuses: [{name: web, ready: false, image: "", imageID: "", restartCount: 0,
  state: {waiting: {reason: ContainerCreating}}}]}`},
			want: "",
		},
		{
			name: "a failed Pod",
			pods: []string{`metadata: {name: job-x}
status: {phase: Failed, reason: Evicted, message: "The node was low on resource: ephemeral-storage."}`},
			want: "Pod job-x: Failed: Evicted: The node was low on resource: ephemeral-storage.",
		},
		{
			name: "Pods being deleted and Pods that succeeded are left out; the first Pod by name wins",
			pods: []string{
				`metadata: {name: c-pull}
status: {phase: Pending, containerStatuses: [{name: w, ready: false, image: "", imageID: "", restartCount: 0, state: {waiting: {reason: ErrImagePull}}}]}`,
				`metadata: {name: b-done}
status: {phase: Succeeded}`,
				`metadata: {name: a-going, deletionTimestamp: "2026-01-01T00:00:00Z"}
status: {phase: Failed, reason: Evicted}`,
				`metadata: {name: d-unscheduled}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: full}]}`,
			},
			want: "Pod c-pull: container w: ErrImagePull",
		},
		{
			name: "a long message is cut",
			pods: []string{`metadata: {name: p}
status: {phase: Pending, conditions: [{type: PodScheduled, status: "False", reason: Unschedulable, message: "` + long + `"}]}`},
			want: ("Pod p: PodScheduled=False: Unschedulable: " + long)[:MaxPodReason-len("…")] + "…",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := PodReason(pods(t, c.pods...), c.claims, nil)
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
			if len(got) > MaxPodReason {
				t.Errorf("%d bytes, over %d", len(got), MaxPodReason)
			}
		})
	}
}

// A secret in a message is redacted before the reason is cut: a cut
// through the secret would leave its start, which no redaction then finds.
func TestPodReasonRedactsBeforeCutting(t *testing.T) {
	secret := "hunter2-correct-horse-battery"
	msg := strings.Repeat("x", MaxPodReason-70) + " token=" + secret + " and more"
	p := pods(t, `metadata: {name: web-abc}
status: {phase: Pending, containerStatuses: [{name: web, ready: false, image: "", imageID: "", restartCount: 0,
  state: {waiting: {reason: CreateContainerError, message: "`+msg+`"}}}]}`)
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "***") }
	if got := PodReason(p, nil, nil); !strings.Contains(got, secret[:10]) {
		t.Fatalf("the case does not cut through the secret: %q", got)
	}
	got := PodReason(p, nil, redact)
	if strings.Contains(got, secret[:4]) || !strings.Contains(got, "token=***") {
		t.Errorf("the secret was not redacted before the cut: %q", got)
	}
}

func TestRunsPods(t *testing.T) {
	for _, k := range []string{"apps/Deployment", "apps/StatefulSet", "apps/DaemonSet", "apps/ReplicaSet", "batch/Job", "/Pod"} {
		g, kind, _ := strings.Cut(k, "/")
		if !RunsPods(schema.GroupKind{Group: g, Kind: kind}) {
			t.Errorf("%s: want its Pods read", k)
		}
	}
	for _, k := range []string{"batch/CronJob", "/Service", "/PersistentVolumeClaim", "apps/ControllerRevision"} {
		g, kind, _ := strings.Cut(k, "/")
		if RunsPods(schema.GroupKind{Group: g, Kind: kind}) {
			t.Errorf("%s: want no Pods read", k)
		}
	}
}
