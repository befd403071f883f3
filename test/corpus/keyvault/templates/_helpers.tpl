{{- define "keyvault.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (default .Chart.Name .Values.nameOverride) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "keyvault.selectorLabels" -}}
app.kubernetes.io/name: {{ default .Chart.Name .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "keyvault.labels" -}}
{{ include "keyvault.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end -}}

{{- define "keyvault.secretName" -}}
{{- default (include "keyvault.fullname" .) .Values.auth.existingSecret -}}
{{- end -}}

{{/*
keyvault.rootPassword: the given password; else the one already stored in
the release's Secret (lookup: empty under helm template and --dry-run);
else a new random one. Base64-encoded.
*/}}
{{- define "keyvault.rootPassword" -}}
{{- if .Values.auth.rootPassword -}}
{{- .Values.auth.rootPassword | b64enc -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "keyvault.fullname" .) -}}
{{- if and $existing $existing.data (index $existing.data "root-password") -}}
{{- index $existing.data "root-password" -}}
{{- else -}}
{{- randAlphaNum (int .Values.auth.passwordLength) | b64enc -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* keyvault.pdb.apiVersion: policy/v1 where served, policy/v1beta1 before. */}}
{{- define "keyvault.pdb.apiVersion" -}}
{{- if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" -}}
policy/v1
{{- else -}}
policy/v1beta1
{{- end -}}
{{- end -}}
