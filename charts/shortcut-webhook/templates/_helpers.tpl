{{/* The chart name, overridable with nameOverride. */}}
{{- define "shortcut-webhook.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The name of every namespaced object and of the Service the API server dials. */}}
{{- define "shortcut-webhook.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "shortcut-webhook.selectorLabels" -}}
app.kubernetes.io/name: {{ include "shortcut-webhook.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "shortcut-webhook.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "shortcut-webhook.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: shortcut-webhook
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "shortcut-webhook.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "shortcut-webhook.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "shortcut-webhook.tlsSecretName" -}}
{{- default (printf "%s-tls" (include "shortcut-webhook.fullname" .)) .Values.tls.secretName }}
{{- end }}

{{/* The DNS name the API server verifies: <service>.<namespace>.svc. */}}
{{- define "shortcut-webhook.serviceHost" -}}
{{- printf "%s.%s.svc" (include "shortcut-webhook.fullname" .) .Release.Namespace }}
{{- end }}

{{- define "shortcut-webhook.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}
