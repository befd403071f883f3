package readiness

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Each object is read by a different kstatus rule; its reduction must
// give the same readiness, status and message.
func TestReduceKeepsReadiness(t *testing.T) {
	cases := map[string]string{
		"Deployment rolling out": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: a, generation: 3, labels: {app: web}, annotations: {note: x}}
spec:
  replicas: 3
  progressDeadlineSeconds: 600
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}
status: {observedGeneration: 3, replicas: 3, updatedReplicas: 1, readyReplicas: 2, availableReplicas: 2,
  conditions: [{type: Progressing, status: "True", reason: ReplicaSetUpdated}]}`,
		"Deployment available": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 2, template: {spec: {containers: [{name: c}]}}}
status: {observedGeneration: 2, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2,
  conditions: [{type: Available, status: "True"}, {type: Progressing, status: "True", reason: NewReplicaSetAvailable}]}`,
		"Deployment past its deadline": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 2}
spec: {replicas: 1}
status: {observedGeneration: 2, replicas: 1, conditions: [{type: Progressing, status: "False", reason: ProgressDeadlineExceeded}]}`,
		"Deployment not observed yet": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, generation: 4}
spec: {replicas: 1}
status: {observedGeneration: 3}`,
		"StatefulSet held by a partition": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, generation: 2}
spec: {replicas: 3, updateStrategy: {type: RollingUpdate, rollingUpdate: {partition: 2}}, volumeClaimTemplates: [{metadata: {name: data}}]}
status: {observedGeneration: 2, replicas: 3, readyReplicas: 3, currentReplicas: 2, updatedReplicas: 1, currentRevision: a, updateRevision: b}`,
		"StatefulSet OnDelete": `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, generation: 2}
spec: {replicas: 1, updateStrategy: {type: OnDelete}}
status: {observedGeneration: 2, replicas: 1, readyReplicas: 1}`,
		"DaemonSet": `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, generation: 1}
spec: {template: {spec: {containers: [{name: c}]}}}
status: {observedGeneration: 1, desiredNumberScheduled: 3, currentNumberScheduled: 3, updatedNumberScheduled: 2, numberAvailable: 3, numberReady: 3}`,
		"Job running": `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, generation: 1}
spec: {parallelism: 2, completions: 4, template: {spec: {containers: [{name: c}]}}}
status: {active: 2, succeeded: 1, startTime: "2026-01-01T00:00:00Z"}`,
		"Job failed": `apiVersion: batch/v1
kind: Job
metadata: {name: migrate, generation: 1}
spec: {template: {spec: {containers: [{name: c}]}}}
status: {failed: 1, conditions: [{type: Failed, status: "True", reason: BackoffLimitExceeded, message: too many}]}`,
		"LoadBalancer waiting": `apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.9, ports: [{port: 80}]}
status: {loadBalancer: {}}`,
		"LoadBalancer with an address": `apiVersion: v1
kind: Service
metadata: {name: lb}
spec: {type: LoadBalancer, clusterIP: 10.0.0.9, ports: [{port: 80}]}
status: {loadBalancer: {ingress: [{ip: 127.0.0.2}]}}`,
		"PVC pending": `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
status: {phase: Pending}`,
		"Pod crash looping": `apiVersion: v1
kind: Pod
metadata: {name: p}
spec: {containers: [{name: c}]}
status: {phase: Running, conditions: [{type: Ready, status: "False"}], containerStatuses: [{name: c, ready: false, restartCount: 5, state: {waiting: {reason: CrashLoopBackOff}}}]}`,
		"custom resource with Ready": `apiVersion: example.com/v1
kind: Database
metadata: {name: d, generation: 5}
spec: {size: 3, nested: {deep: true}}
status: {observedGeneration: 5, conditions: [{type: Ready, status: "False", reason: Provisioning, message: waiting for disks}]}`,
		"custom resource being deleted": `apiVersion: example.com/v1
kind: Database
metadata: {name: d, generation: 5, deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: [x]}
status: {observedGeneration: 5, conditions: [{type: Ready, status: "True"}]}`,
	}
	for name, y := range cases {
		full := obj(t, y)
		reduced := Reduce(full)
		c1, f1, w1 := Check(full)
		c2, f2, w2 := Check(reduced)
		if c1 != c2 || f1 != f2 || w1 != w2 {
			t.Errorf("%s: full (%v, %v, %q), reduced (%v, %v, %q)", name, c1, f1, w1, c2, f2, w2)
		}
		if _, ok, _ := unstructured.NestedFieldNoCopy(reduced.Object, "spec", "template"); ok {
			t.Errorf("%s: the pod template was kept", name)
		}
		sel, _, _ := unstructured.NestedFieldNoCopy(full.Object, "spec", "selector")
		if kept, _, _ := unstructured.NestedFieldNoCopy(reduced.Object, "spec", "selector"); fmt.Sprint(kept) != fmt.Sprint(sel) {
			t.Errorf("%s: the selector %v was not kept (%v)", name, sel, kept)
		}
		if reduced.GetLabels() != nil || reduced.GetAnnotations() != nil {
			t.Errorf("%s: labels or annotations were kept", name)
		}
		if reduced.GetName() != full.GetName() || reduced.GetResourceVersion() != full.GetResourceVersion() {
			t.Errorf("%s: identity lost", name)
		}
	}
}
