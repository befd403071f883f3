{{- define "memcached.fullname" -}}
{{- printf "%s-memcached" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "memcached.labels" -}}
app.kubernetes.io/name: memcached
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "memcached.image" -}}
{{- if .registry -}}{{ .registry }}/{{- end -}}{{ .repository }}:{{ .tag }}
{{- end -}}
