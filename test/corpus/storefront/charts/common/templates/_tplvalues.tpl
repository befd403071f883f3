{{/*
common.tplvalues.render: renders a value that may hold template
expressions. A string is rendered as it is; anything else as YAML first.
Usage: {{ include "common.tplvalues.render" (dict "value" .Values.path "context" $) }}
*/}}
{{- define "common.tplvalues.render" -}}
{{- $value := ternary .value (.value | toYaml) (typeIs "string" .value) -}}
{{- if contains "{{" $value -}}
{{- tpl $value .context -}}
{{- else -}}
{{- $value -}}
{{- end -}}
{{- end -}}
