{{/*
Renders a value that may hold template text (Bitnami's
common.tplvalues.render): a string through tpl, anything else as YAML
through tpl.
Usage: {{ include "lookupapp.tplvalues.render" (dict "value" .Values.x "context" $) }}
*/}}
{{- define "lookupapp.tplvalues.render" -}}
{{- if typeIs "string" .value }}
{{- tpl .value .context }}
{{- else }}
{{- tpl (.value | toYaml) .context }}
{{- end }}
{{- end -}}

{{- define "lookupapp.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
