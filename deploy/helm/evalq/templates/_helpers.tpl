{{/* The release's name prefix (the chart's name unless the release already holds it). */}}
{{- define "evalq.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "evalq.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector labels of one component: call with (dict "root" $ "component" "api"). */}}
{{- define "evalq.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "evalq.secretName" -}}
{{- default (printf "%s-secrets" (include "evalq.fullname" .)) .Values.existingSecret -}}
{{- end -}}

{{- define "evalq.image" -}}
{{ printf "%s:%s" .Values.image.repository .Values.image.tag | quote }}
{{- end -}}

{{/* One secret key as an environment variable: (dict "root" $ "name" "EVALQ_X" "key" "x" "optional" true). */}}
{{- define "evalq.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "evalq.secretName" .root }}
      key: {{ .key }}
      {{- if .optional }}
      optional: true
      {{- end }}
{{- end -}}

{{/* The settings every evalq process takes (not secret), from the ConfigMap. */}}
{{- define "evalq.settingsFrom" -}}
- configMapRef:
    name: {{ include "evalq.fullname" . }}-settings
{{- end -}}

{{/* The judge worker's bound: replicas that keep the provider's budget busy, by Little's law
     (calls in flight = requests per second x seconds per call), each replica holding
     `concurrency` calls; at least minReplicas. */}}
{{- define "evalq.judgeMaxReplicas" -}}
{{- $w := .Values.workers.judge -}}
{{- $inFlight := mulf (divf .Values.judge.requestsPerMinute 60) .Values.judge.secondsPerCall -}}
{{- $replicas := ceil (divf $inFlight $w.concurrency) | int -}}
{{- max $replicas (int $w.minReplicas) 1 -}}
{{- end -}}

{{- define "evalq.containerSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: {{ .Values.readOnlyRootFilesystem }}
capabilities:
  drop: ["ALL"]
{{- end -}}
