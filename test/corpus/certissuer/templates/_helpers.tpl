{{- define "certissuer.fullname" -}}
{{- printf "%s-certissuer" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "certissuer.labels" -}}
app.kubernetes.io/name: certissuer
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "certissuer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ include "certissuer.fullname" . }}{{- else -}}default{{- end -}}
{{- end -}}
