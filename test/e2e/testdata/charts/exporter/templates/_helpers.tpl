{{/* The name of every object of a release. */}}
{{- define "exporter.fullname" -}}
{{- printf "%s-exporter" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every object of a release. */}}
{{- define "exporter.labels" -}}
app.kubernetes.io/name: exporter
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The connection string, without the credentials. */}}
{{- define "exporter.uri" -}}
{{- with .Values.config.datasource -}}
{{ .host }}:{{ .port }}/{{ .database }}?sslmode={{ .sslmode }}
{{- end -}}
{{- end -}}
