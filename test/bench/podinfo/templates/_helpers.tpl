{{/* podinfo.name: the chart's name, or nameOverride. */}}
{{- define "podinfo.name" -}}
{{- .Values.nameOverride | default .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
podinfo.fullname names every object: fullnameOverride, else the release's
name, followed by the chart's unless it already holds it.
*/}}
{{- define "podinfo.fullname" -}}
{{- $name := include "podinfo.name" . }}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* podinfo.selectorLabels: what the Service and the Deployment select on. */}}
{{- define "podinfo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "podinfo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* podinfo.labels: every object's labels. */}}
{{- define "podinfo.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "podinfo.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* podinfo.serviceAccountName: the ServiceAccount the Pods run as. */}}
{{- define "podinfo.serviceAccountName" -}}
{{- if .Values.serviceAccount.enabled }}
{{- .Values.serviceAccount.name | default (include "podinfo.fullname" .) }}
{{- else }}
{{- .Values.serviceAccount.name | default "default" }}
{{- end }}
{{- end }}
