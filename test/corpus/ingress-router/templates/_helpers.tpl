{{- define "router.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "router.fullname" -}}
{{- if contains (include "router.name" .) .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (include "router.name" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "router.controller.fullname" -}}
{{- printf "%s-%s" (include "router.fullname" .) .Values.controller.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "router.selectorLabels" -}}
app.kubernetes.io/name: {{ include "router.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: {{ .Values.controller.name }}
{{- end -}}

{{- define "router.labels" -}}
{{ include "router.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "router.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "router.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The controller's image: registry/repository, then @digest or :tag. */}}
{{- define "router.image" -}}
{{- with .Values.controller.image -}}
{{- printf "%s/%s" .registry .repository -}}
{{- if .digest -}}@{{ .digest }}{{- else -}}:{{ .tag | default $.Chart.AppVersion }}{{- end -}}
{{- end -}}
{{- end -}}

{{/* More than one controller Pod runs: the PodDisruptionBudget is worth having. */}}
{{- define "router.controller.multiple" -}}
{{- $c := .Values.controller -}}
{{- if or (and $c.autoscaling.enabled (gt (int $c.autoscaling.minReplicas) 1)) (and (not $c.autoscaling.enabled) (gt (int $c.replicaCount) 1)) -}}
true
{{- end -}}
{{- end -}}
