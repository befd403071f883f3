{{/* The name of every namespaced object of a release. */}}
{{- define "tenantapp.fullname" -}}
{{- printf "%s-tenantapp" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The name of the release's cluster-scoped objects: unique per namespace. */}}
{{- define "tenantapp.clusterName" -}}
{{- printf "%s-%s-tenantapp" .Release.Namespace .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The ServiceAccount the app's Pods run as. */}}
{{- define "tenantapp.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ include "tenantapp.fullname" . }}
{{- else -}}
default
{{- end -}}
{{- end -}}

{{/* Labels of every object of a release. */}}
{{- define "tenantapp.labels" -}}
app.kubernetes.io/name: tenantapp
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
