{{- define "bench.labels" -}}
app.kubernetes.io/name: bench
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/part-of: chartkeeper-bench
{{- end }}
{{- define "bench.selector" -}}
app.kubernetes.io/name: bench
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}
