{{/* The prefix of every object's name: the release's name, with "lvmqos" added unless it has it. */}}
{{- define "lvmqos.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels on every object: Helm's bookkeeping, and the part-of label the kustomize base adds too. */}}
{{- define "lvmqos.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: lvmqos
{{- end -}}

{{/* The node pods' selector; it stays as the kustomize base has it, so either can replace the other. */}}
{{- define "lvmqos.selectorLabels" -}}
app.kubernetes.io/name: lvmqos
app.kubernetes.io/component: node
{{- end -}}

{{- define "lvmqos.serviceAccountName" -}}
{{ include "lvmqos.fullname" . }}-node
{{- end -}}

{{/*
The driver's image. values.yaml's repository is an example (no registry answers for example.com):
left so, the node pods would never start (ImagePullBackOff), so the chart stops with what to set.
A `fail` and not the schema, because `helm lint` checks the default values against the schema.
*/}}
{{- define "lvmqos.image" -}}
{{- if hasPrefix "registry.example.com/" .Values.image.repository -}}
{{- fail (printf "image.repository is %s, the chart's example: set it to the repository you pushed the driver's image to (--set image.repository=REGISTRY/lvmqos), or, for an image imported on every node with ctr, to docker.io/library/lvmqos with image.pullPolicy=Never (deploy/README.md, \"Side-loading the image\")" .Values.image.repository) -}}
{{- end -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "lvmqos.metricsPort" -}}
{{ splitList ":" .Values.metrics.address | last }}
{{- end -}}

{{/* A ServiceAccount subject for the bindings. */}}
{{- define "lvmqos.subject" -}}
- kind: ServiceAccount
  name: {{ include "lvmqos.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/* StorageClass and VolumeAttributesClass parameters: strings, as Kubernetes stores them. */}}
{{- define "lvmqos.parameters" -}}
{{- range $key, $value := . }}
{{ $key }}: {{ $value | toString | quote }}
{{- end -}}
{{- end -}}

{{- define "lvmqos.sidecarSecurity" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: ["ALL"]
{{- end -}}

{{- define "lvmqos.smallSidecarResources" -}}
requests:
  cpu: 5m
  memory: 16Mi
limits:
  memory: 64Mi
{{- end -}}

{{- define "lvmqos.apiSidecarResources" -}}
requests:
  cpu: 10m
  memory: 32Mi
limits:
  memory: 256Mi
{{- end -}}
