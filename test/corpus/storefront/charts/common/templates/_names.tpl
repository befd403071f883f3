{{/*
common.names.name: the chart's name, or .Values.nameOverride.
*/}}
{{- define "common.names.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
common.names.fullname: .Values.fullnameOverride, else release-name, the
release name alone when it already contains the name.
*/}}
{{- define "common.names.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
common.names.component: fullname with a component suffix.
Usage: {{ include "common.names.component" (dict "component" "web" "context" $) }}
*/}}
{{- define "common.names.component" -}}
{{- printf "%s-%s" (include "common.names.fullname" .context) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}
