{{- define "docdb.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (default .Chart.Name .Values.nameOverride) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "docdb.selectorLabels" -}}
app.kubernetes.io/name: {{ default .Chart.Name .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: database
{{- end -}}

{{- define "docdb.labels" -}}
{{ include "docdb.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "docdb.image" -}}
{{- $registry := default .Values.image.registry .Values.global.imageRegistry -}}
{{- printf "%s/%s:%s" $registry .Values.image.repository .Values.image.tag -}}
{{- end -}}

{{- define "docdb.secretName" -}}
{{- default (include "docdb.fullname" .) .Values.auth.existingSecret -}}
{{- end -}}

{{/*
Requests and limits by size (resourcesPreset): cpu, memory and
ephemeral-storage requested, then the same three limited.
*/}}
{{- define "docdb.sized" -}}
{{- $table := dict
  "micro"  (list "250m" "256Mi" "50Mi"  "500m" "512Mi" "2Gi")
  "small"  (list "500m" "512Mi" "100Mi" "1"    "1Gi"   "2Gi")
  "medium" (list "1"    "1Gi"   "100Mi" "2"    "2Gi"   "4Gi")
  "large"  (list "2"    "4Gi"   "200Mi" "4"    "8Gi"   "8Gi")
  "xlarge" (list "4"    "8Gi"   "200Mi" "8"    "16Gi"  "8Gi")
-}}
{{- $row := get $table . -}}
{{- if not $row -}}
{{- fail (printf "resourcesPreset %q: want none or one of %s" . (keys $table | sortAlpha | join ", ")) -}}
{{- end -}}
requests:
  cpu: {{ index $row 0 | quote }}
  memory: {{ index $row 1 | quote }}
  ephemeral-storage: {{ index $row 2 | quote }}
limits:
  cpu: {{ index $row 3 | quote }}
  memory: {{ index $row 4 | quote }}
  ephemeral-storage: {{ index $row 5 | quote }}
{{- end -}}
