{{/*
common.secrets.name: the existing secret when one is given, else the
chart's own.
Usage: {{ include "common.secrets.name" (dict "existingSecret" .Values.auth.existingSecret "context" $) }}
*/}}
{{- define "common.secrets.name" -}}
{{- if .existingSecret -}}
{{- include "common.tplvalues.render" (dict "value" .existingSecret "context" .context) -}}
{{- else -}}
{{- include "common.names.fullname" .context -}}
{{- end -}}
{{- end -}}
