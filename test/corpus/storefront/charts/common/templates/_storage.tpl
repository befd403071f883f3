{{/*
common.storage.class: storageClassName from global.storageClass, else the
persistence's own; "-" means the empty class (no dynamic provisioning).
Usage: {{ include "common.storage.class" (dict "persistence" .Values.persistence "global" .Values.global) }}
*/}}
{{- define "common.storage.class" -}}
{{- $class := .persistence.storageClass -}}
{{- if and .global .global.storageClass -}}
{{- $class = .global.storageClass -}}
{{- end -}}
{{- if $class -}}
{{- if eq "-" $class -}}
storageClassName: ""
{{- else -}}
storageClassName: {{ $class | quote }}
{{- end -}}
{{- end -}}
{{- end -}}
