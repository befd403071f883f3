{{/* Name of the chart, overridable. */}}
{{- define "migrating-app.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified app name: release-chart unless the release already names the chart. */}}
{{- define "migrating-app.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "migrating-app.selectorLabels" -}}
app.kubernetes.io/name: {{ include "migrating-app.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "migrating-app.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "migrating-app.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "migrating-app.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The environment every container of the chart (app and hook Jobs) gets. */}}
{{- define "migrating-app.dbEnv" -}}
- name: DB_HOST
  value: {{ .Values.database.host | quote }}
- name: DB_PORT
  value: {{ .Values.database.port | quote }}
- name: DB_NAME
  value: {{ .Values.database.name | quote }}
{{- with .Values.database.existingSecret }}
- name: DB_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: password
{{- end }}
{{- end -}}

{{/*
A hook Job. Takes a dict: root (the chart context), component, hook,
weight, args.
*/}}
{{- define "migrating-app.hookJob" -}}
{{- $root := .root -}}
apiVersion: batch/v1
kind: Job
metadata:
  name: {{ include "migrating-app.fullname" $root }}-{{ .component }}
  labels:
    {{- include "migrating-app.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ .component }}
  annotations:
    "helm.sh/hook": {{ .hook }}
    "helm.sh/hook-weight": {{ .weight | quote }}
    "helm.sh/hook-delete-policy": before-hook-creation,hook-succeeded
spec:
  backoffLimit: {{ $root.Values.migrations.backoffLimit }}
  activeDeadlineSeconds: {{ $root.Values.migrations.activeDeadlineSeconds }}
  template:
    metadata:
      labels:
        {{- include "migrating-app.selectorLabels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ .component }}
    spec:
      restartPolicy: Never
      {{- with $root.Values.nodeSelector }}
      nodeSelector: {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $root.Values.tolerations }}
      tolerations: {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ include "migrating-app.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args: {{- toYaml .args | nindent 12 }}
          env: {{- include "migrating-app.dbEnv" $root | nindent 12 }}
{{- end -}}
