{{- define "gizmo.fullname" -}}
{{- printf "%s-gizmo" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Cluster-scoped objects carry the namespace: two releases of the same name may not collide. */}}
{{- define "gizmo.clusterName" -}}
{{- printf "%s-%s-gizmo" .Release.Namespace .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "gizmo.labels" -}}
app.kubernetes.io/name: gizmo-controller
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "gizmo.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ include "gizmo.fullname" . }}{{- else -}}default{{- end -}}
{{- end -}}
