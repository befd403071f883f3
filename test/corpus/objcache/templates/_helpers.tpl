{{- define "objcache.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name (default .Chart.Name .Values.nameOverride) | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "objcache.selectorLabels" -}}
app.kubernetes.io/name: {{ default .Chart.Name .Values.nameOverride }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "objcache.labels" -}}
{{ include "objcache.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "objcache.image" -}}
{{- $registry := default .Values.image.registry .Values.global.imageRegistry -}}
{{- printf "%s/%s:%s" $registry .Values.image.repository .Values.image.tag -}}
{{- end -}}

{{- define "objcache.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "objcache.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
The requests and limits of a size (resourcesPreset). Each size requests
some ephemeral-storage (the cache writes nothing to disk but its logs)
and bounds it.
*/}}
{{- define "objcache.sized" -}}
{{- $sizes := dict
  "nano"   (list "50m"  "64Mi"  "50Mi"  "100m" "128Mi" "1Gi")
  "micro"  (list "125m" "128Mi" "50Mi"  "250m" "256Mi" "1Gi")
  "small"  (list "250m" "256Mi" "100Mi" "500m" "512Mi" "2Gi")
  "medium" (list "500m" "1Gi"   "100Mi" "1"    "2Gi"   "2Gi")
  "large"  (list "1"    "2Gi"   "200Mi" "2"    "4Gi"   "4Gi")
  "xlarge" (list "2"    "4Gi"   "200Mi" "4"    "8Gi"   "4Gi")
-}}
{{- $s := get $sizes . -}}
{{- if not $s -}}
{{- fail (printf "resourcesPreset %q: want none or one of %s" . (keys $sizes | sortAlpha | join ", ")) -}}
{{- end -}}
requests:
  cpu: {{ index $s 0 | quote }}
  memory: {{ index $s 1 | quote }}
  ephemeral-storage: {{ index $s 2 | quote }}
limits:
  cpu: {{ index $s 3 | quote }}
  memory: {{ index $s 4 | quote }}
  ephemeral-storage: {{ index $s 5 | quote }}
{{- end -}}

{{/* The Pods' affinity: the affinity value, else the anti-affinity preset. */}}
{{- define "objcache.affinity" -}}
{{- if .Values.affinity -}}
{{- toYaml .Values.affinity -}}
{{- else if eq .Values.podAntiAffinityPreset "soft" -}}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 1
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels: {{- include "objcache.selectorLabels" . | nindent 12 }}
{{- else if eq .Values.podAntiAffinityPreset "hard" -}}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels: {{- include "objcache.selectorLabels" . | nindent 10 }}
{{- end -}}
{{- end -}}
