package manifests

import (
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// Chart returns the operator's Helm chart, by path under the chart
// directory: what config/default deploys (CRDs, ServiceAccount, manager
// ClusterRole and leader-election Role with their bindings, the manager
// Deployment), templated on the release's name (the prefix config/default
// gives, "chartkeeper" reproduces its names) and namespace, and on values.
// As kubebuilder's helm plugin does, the CRDs are templates (crd.enable),
// not crds/: Helm installs crds/ once and never upgrades them, so a chart
// upgrade would not carry the kinds' new schemas; crd.keep annotates them
// helm.sh/resource-policy: keep so that helm uninstall leaves them and
// every custom resource in place.
func (o *Operator) Chart() (map[string][]byte, error) {
	out := map[string][]byte{}
	values, err := o.chartValues()
	if err != nil {
		return nil, err
	}
	out["Chart.yaml"] = []byte(header + fmt.Sprintf(chartYAML, operatorName, operatorVersion, operatorVersion))
	out["values.yaml"] = values
	out[filepath.Join("templates", "_helpers.tpl")] = []byte(strings.Replace(helpersTpl, "{{/*", "{{/* "+strings.TrimSpace(strings.TrimPrefix(header, "#")), 1))
	for _, crd := range o.CRDs {
		c := newChartTemplate()
		m, err := toMap(crd.CRD)
		if err != nil {
			return nil, err
		}
		md := m["metadata"].(map[string]any)
		ann, _ := md["annotations"].(map[string]any)
		if ann == nil {
			ann = map[string]any{}
		}
		for k, v := range c.Block(`include "chartkeeper.crdAnnotations" .`) {
			ann[k] = v
		}
		md["annotations"] = ann
		md["labels"] = c.Block(`include "chartkeeper.labels" .`)
		b, err := c.Render(m, ".Values.crd.enable")
		if err != nil {
			return nil, err
		}
		out[filepath.Join("templates", "crd", crd.File)] = b
	}
	rbac, err := o.chartRBAC()
	if err != nil {
		return nil, err
	}
	for rel, b := range rbac {
		out[filepath.Join("templates", "rbac", rel)] = b
	}
	d, err := o.chartDeployment()
	if err != nil {
		return nil, err
	}
	out[filepath.Join("templates", "manager", "deployment.yaml")] = d
	return out, nil
}

// managerName is the name of the manager's ServiceAccount and Deployment
// in the chart (and, with the release name chartkeeper, in config/default).
const managerName = releaseToken + "-controller-manager"

// chartRBAC returns the RBAC templates: the ServiceAccount, the manager
// ClusterRole and the leader-election Role (as config/rbac has them) and
// their bindings to the ServiceAccount.
func (o *Operator) chartRBAC() (map[string][]byte, error) {
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: managerName, Namespace: namespaceToken}}
	docs := map[string][]any{}
	c := newChartTemplate()
	labels := func() map[string]string {
		m := map[string]string{}
		for k := range c.Block(`include "chartkeeper.labels" .`) {
			m[k] = ""
		}
		return m
	}
	sa := &corev1.ServiceAccount{}
	sa.APIVersion, sa.Kind = "v1", "ServiceAccount"
	sa.Name, sa.Namespace, sa.Labels = managerName, namespaceToken, labels()
	docs["service_account.yaml"] = []any{sa}

	role := o.Role.DeepCopy()
	role.Name, role.Labels = releaseToken+"-"+o.Role.Name, labels()
	binding := &rbacv1.ClusterRoleBinding{Subjects: subject, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name}}
	binding.APIVersion, binding.Kind = rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"
	binding.Name, binding.Labels = releaseToken+"-manager-rolebinding", labels()
	docs["role.yaml"] = []any{role, binding}

	le := o.LeaderElection.DeepCopy()
	le.Name, le.Namespace, le.Labels = releaseToken+"-"+o.LeaderElection.Name, namespaceToken, labels()
	leBinding := &rbacv1.RoleBinding{Subjects: subject, RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: le.Name}}
	leBinding.APIVersion, leBinding.Kind = rbacv1.SchemeGroupVersion.String(), "RoleBinding"
	leBinding.Name, leBinding.Namespace, leBinding.Labels = le.Name, namespaceToken, labels()
	docs["leader_election_role.yaml"] = []any{le, leBinding}

	out := map[string][]byte{}
	for rel, objs := range docs {
		var buf bytes.Buffer
		for i, obj := range objs {
			b, err := c.Render(obj, "")
			if err != nil {
				return nil, err
			}
			if i > 0 {
				buf.WriteString("---\n")
				b = bytes.TrimPrefix(b, []byte(header))
			}
			buf.Write(b)
		}
		out[rel] = buf.Bytes()
	}
	return out, nil
}

// chartDeployment returns the manager Deployment's template: config's
// Deployment with the image, pull policy, replicas, resources and security
// contexts from values, --leader-elect, --metrics-bind-address and
// --zap-log-level following leaderElection, metrics and logLevel, and
// WATCH_NAMESPACE the watchNamespaces.
func (o *Operator) chartDeployment() ([]byte, error) {
	c := newChartTemplate()
	d := o.Deployment.DeepCopy()
	d.Name, d.Namespace = managerName, namespaceToken
	d.Spec.Template.Spec.ServiceAccountName = managerName
	ctr := &d.Spec.Template.Spec.Containers[0]
	for i, a := range ctr.Args {
		switch {
		case a == "--leader-elect":
			ctr.Args[i] = "--leader-elect=" + c.Inline("{{ .Values.leaderElection.enabled }}")
		case strings.HasPrefix(a, "--metrics-bind-address="):
			ctr.Args[i] = "--metrics-bind-address=" + c.Inline("{{ if .Values.metrics.enabled }}{{ .Values.metrics.bindAddress }}:{{ .Values.metrics.port }}{{ else }}0{{ end }}")
		}
	}
	ctr.Args = append(ctr.Args, "--zap-log-level="+c.Inline("{{ .Values.logLevel }}"))
	ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "WATCH_NAMESPACE", Value: c.Inline(`{{ join "," .Values.watchNamespaces | quote }}`)})
	m, err := toMap(d)
	if err != nil {
		return nil, err
	}
	md := m["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	for k, v := range c.Block(`include "chartkeeper.labels" .`) {
		labels[k] = v
	}
	spec := m["spec"].(map[string]any)
	if s, ok := spec["strategy"].(map[string]any); ok && len(s) == 0 {
		delete(spec, "strategy")
	}
	spec["replicas"] = c.Inline("{{ .Values.replicas }}")
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	pod["securityContext"] = c.Block("toYaml .Values.podSecurityContext")
	cm := pod["containers"].([]any)[0].(map[string]any)
	cm["image"] = c.Inline(`"{{ .Values.image.repository }}:{{ .Values.image.tag }}"`)
	cm["imagePullPolicy"] = c.Inline("{{ .Values.image.pullPolicy }}")
	cm["resources"] = c.Block("toYaml .Values.resources")
	cm["securityContext"] = c.Block("toYaml .Values.securityContext")
	for _, p := range cm["ports"].([]any) {
		if p := p.(map[string]any); p["name"] == "metrics" || p["name"] == "https" {
			p["containerPort"] = c.Inline("{{ .Values.metrics.port }}")
		}
	}
	return c.Render(m, "")
}

// chartValues returns values.yaml: config's image, replicas, resources and
// security contexts as the defaults, and the settings the templates read.
func (o *Operator) chartValues() ([]byte, error) {
	ctr := o.container()
	repo, tag := ctr.Image, "latest"
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	pullPolicy := ctr.ImagePullPolicy
	if pullPolicy == "" {
		pullPolicy = corev1.PullIfNotPresent
	}
	metricsHost, metricsPort := "", "8080"
	if addr, ok := o.flag("metrics-bind-address"); ok {
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("manager --metrics-bind-address: %w", err)
		}
		metricsHost, metricsPort = h, p
	}
	_, leader := o.flag("leader-elect")
	replicas := int32(1)
	if o.Deployment.Spec.Replicas != nil {
		replicas = *o.Deployment.Spec.Replicas
	}
	blocks := []any{ctr.Resources, o.Deployment.Spec.Template.Spec.SecurityContext, ctr.SecurityContext}
	yamls := make([]any, len(blocks))
	for i, b := range blocks {
		y, err := yaml.Marshal(b)
		if err != nil {
			return nil, err
		}
		yamls[i] = strings.TrimRight(strings.ReplaceAll("\n"+strings.TrimRight(string(y), "\n"), "\n", "\n  "), " ")
	}
	args := append([]any{repo, tag, pullPolicy, replicas, leader, metricsHost, metricsPort}, yamls...)
	return []byte(header + fmt.Sprintf(valuesYAML, args...)), nil
}

const chartYAML = `apiVersion: v2
name: %s
description: The chartkeeper operator (CRDs, RBAC and manager), generated from config/.
type: application
version: %s
appVersion: %q
`

const valuesYAML = `# The manager image.
image:
  repository: %s
  tag: %s
  pullPolicy: %s
# Manager replicas; with leader election one reconciles, the others stand by.
replicas: %d
# Elect a leader among the replicas (--leader-elect).
leaderElection:
  enabled: %t
# Log level of the manager (--zap-log-level): debug, info, error or a number.
logLevel: info
# Namespaces the manager watches (WATCH_NAMESPACE); empty: all of them.
watchNamespaces: []
# The metrics endpoint (--metrics-bind-address); disabled binds "0".
metrics:
  enabled: true
  bindAddress: %q
  port: %s
# The manager container's resources.
resources:%s
# The manager Pod's security context.
podSecurityContext:%s
# The manager container's security context.
securityContext:%s
# The CRDs, templates installed and upgraded with the chart; keep leaves
# them (and every custom resource) in place on helm uninstall.
crd:
  enable: true
  keep: true
`

const helpersTpl = `{{/* */}}

{{/* Labels of every object of the chart. */}}
{{- define "chartkeeper.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* Annotations of the CRDs: kept on helm uninstall with crd.keep. */}}
{{- define "chartkeeper.crdAnnotations" -}}
{{- if .Values.crd.keep }}
helm.sh/resource-policy: keep
{{- end }}
{{- end }}
`
