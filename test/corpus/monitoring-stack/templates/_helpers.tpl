{{- define "monitoring-stack.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (default "mon" .Values.nameOverride) | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "monitoring-stack.labels" -}}
app.kubernetes.io/part-of: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/*
monitoring-stack.samples: the recorded sample rows of one panel, a JSON
array of 64-character strings, each the sha256 of the one before, from a
seed (deterministic; compresses about as little as real sample data).
Takes a dict: seed, rows.
*/}}
{{- define "monitoring-stack.samples" -}}
{{- $row := sha256sum .seed -}}
[{{- range $i := until (int .rows) -}}{{- if $i -}},{{- end -}}{{- $row = sha256sum $row -}}"{{ $row }}"{{- end -}}]
{{- end -}}
