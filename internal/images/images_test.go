package images

import (
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestRewrite(t *testing.T) {
	for _, tc := range []struct{ in, registry, want string }{
		{"nginx", "mirror:5000", "mirror:5000/library/nginx"},
		{"nginx:1.27", "mirror:5000", "mirror:5000/library/nginx:1.27"},
		{"docker.io/prom/memcached-exporter:v0.14.4", "mirror.local/hub", "mirror.local/hub/prom/memcached-exporter:v0.14.4"},
		{"registry.k8s.io/etcd:3.6.16-0", "mirror.local/", "mirror.local/etcd:3.6.16-0"},
		{"ghcr.io/a/b@sha256:" + sha, "m.local", "m.local/a/b@sha256:" + sha},
		{"ghcr.io/a/b:1@sha256:" + sha, "m.local", "m.local/a/b:1@sha256:" + sha},
		{"mirror:5000/library/nginx:1", "mirror:5000", "mirror:5000/library/nginx:1"}, // already there
	} {
		got, err := Rewrite(tc.in, tc.registry)
		if err != nil || got != tc.want {
			t.Errorf("Rewrite(%q, %q) = %q, %v; want %q", tc.in, tc.registry, got, err, tc.want)
		}
	}
	if _, err := Rewrite("Not A Reference", "m"); err == nil {
		t.Error("an invalid reference was rewritten")
	}
}

const sha = "0123456789012345678901234567890123456789012345678901234567890123"

// Apply relocates every container list of every Pod-template-holding kind
// and adds each pull secret once; Images reads them back.
func TestApplyAndImages(t *testing.T) {
	for _, tc := range []struct{ name, obj, want string }{
		{"deployment", `
kind: Deployment
spec:
  template:
    spec:
      imagePullSecrets: [{name: own}]
      initContainers: [{name: i, image: busybox}]
      containers: [{name: a, image: "nginx:1.27"}, {name: b, image: "quay.io/x/y:2"}]
`, `
kind: Deployment
spec:
  template:
    spec:
      imagePullSecrets: [{name: own}, {name: pull}]
      initContainers: [{name: i, image: m.local/library/busybox}]
      containers: [{name: a, image: "m.local/library/nginx:1.27"}, {name: b, image: "m.local/x/y:2"}]
`},
		{"cronjob", `
kind: CronJob
spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: alpine}]}}}}}
`, `
kind: CronJob
spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: m.local/library/alpine}], imagePullSecrets: [{name: pull}]}}}}}
`},
		{"pod", `
kind: Pod
spec: {containers: [{name: a, image: alpine}], ephemeralContainers: [{name: e, image: debug}]}
`, `
kind: Pod
spec: {containers: [{name: a, image: m.local/library/alpine}], ephemeralContainers: [{name: e, image: m.local/library/debug}], imagePullSecrets: [{name: pull}]}
`},
		{"configmap untouched", `
kind: ConfigMap
data: {image: nginx}
`, `
kind: ConfigMap
data: {image: nginx}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var obj, want map[string]any
			if err := yaml.Unmarshal([]byte(tc.obj), &obj); err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			r := Relocation{Registry: "m.local", PullSecrets: []string{"pull"}}
			for i := 0; i < 2; i++ { // twice: nothing doubles
				if err := r.Apply(obj); err != nil {
					t.Fatal(err)
				}
			}
			if !reflect.DeepEqual(obj, want) {
				got, _ := yaml.Marshal(obj)
				t.Errorf("got:\n%s", got)
			}
			for _, img := range Images(obj) {
				if len(img) < 8 || img[:8] != "m.local/" {
					t.Errorf("Images found %q", img)
				}
			}
		})
	}
}
