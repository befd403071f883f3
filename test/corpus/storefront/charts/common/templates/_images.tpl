{{/*
common.images.image: registry/repository:tag, global.imageRegistry winning
over the image's own registry.
Usage: {{ include "common.images.image" (dict "imageRoot" .Values.image "global" .Values.global) }}
*/}}
{{- define "common.images.image" -}}
{{- $registry := .imageRoot.registry -}}
{{- if and .global .global.imageRegistry -}}
{{- $registry = .global.imageRegistry -}}
{{- end -}}
{{- $ref := .imageRoot.repository -}}
{{- if $registry -}}
{{- $ref = printf "%s/%s" $registry $ref -}}
{{- end -}}
{{- if .imageRoot.digest -}}
{{- printf "%s@%s" $ref .imageRoot.digest -}}
{{- else -}}
{{- printf "%s:%s" $ref (toString .imageRoot.tag) -}}
{{- end -}}
{{- end -}}

{{/*
common.images.pullSecrets: global.imagePullSecrets and the image's own.
Usage: {{ include "common.images.pullSecrets" (dict "images" (list .Values.image) "global" .Values.global) }}
*/}}
{{- define "common.images.pullSecrets" -}}
{{- $secrets := list -}}
{{- if .global -}}
{{- range .global.imagePullSecrets -}}{{- $secrets = append $secrets . -}}{{- end -}}
{{- end -}}
{{- range .images -}}
{{- range .pullSecrets -}}{{- $secrets = append $secrets . -}}{{- end -}}
{{- end -}}
{{- if $secrets }}
imagePullSecrets:
{{- range $secrets | uniq }}
  - name: {{ . }}
{{- end }}
{{- end -}}
{{- end -}}
