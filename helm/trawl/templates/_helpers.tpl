{{/*
Names follow `helm create`: fullname is the release name, or release-chart when the release name
does not already contain the chart's name; 63 characters at most (a DNS label).
*/}}
{{- define "trawl.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "trawl.fullname" -}}
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

{{/* A component's objects: fullname-component, cut so the suffix survives a long release name. */}}
{{- define "trawl.componentName" -}}
{{- $root := index . 0 }}{{ $component := index . 1 }}
{{- $max := int (sub 62 (len $component)) }}
{{- printf "%s-%s" (include "trawl.fullname" $root | trunc $max | trimSuffix "-") $component }}
{{- end }}

{{- define "trawl.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The labels every object carries (Kubernetes' recommended set). */}}
{{- define "trawl.labels" -}}
helm.sh/chart: {{ include "trawl.chart" . }}
{{ include "trawl.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: trawl
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "trawl.selectorLabels" -}}
app.kubernetes.io/name: {{ include "trawl.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* labels plus the component; call with (list $ "fetch"). */}}
{{- define "trawl.componentLabels" -}}
{{ include "trawl.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* Selector labels plus the component: a selector must never change, so no version here. */}}
{{- define "trawl.componentSelectorLabels" -}}
{{ include "trawl.selectorLabels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "trawl.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "trawl.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "trawl.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{- define "trawl.browserImage" -}}
{{- $i := .Values.browser.image }}
{{- if $i.digest }}
{{- printf "%s@%s" $i.repository $i.digest }}
{{- else }}
{{- printf "%s:%s" $i.repository $i.tag }}
{{- end }}
{{- end }}

{{/* The stages in pipeline order (a map would range alphabetically). */}}
{{- define "trawl.stageNames" -}}
search fetch fetch-browser clean synthesize
{{- end }}

{{/* Queue of a stage, as the broker names it: <namespace>.<suffix>. Call with (list $ "fetch-browser"). */}}
{{- define "trawl.queueName" -}}
{{- $root := index . 0 }}{{ $stage := index . 1 }}
{{- $suffix := dict "search" "search" "fetch" "fetch" "fetch-browser" "fetch.browser" "clean" "clean" "synthesize" "synthesize" }}
{{- printf "%s.%s" $root.Values.broker.namespace (get $suffix $stage) }}
{{- end }}

{{/* Seconds a worker may drain (TRAWL__BROKER__SHUTDOWN_GRACE_SECS). */}}
{{- define "trawl.drainSeconds" -}}
{{- add .Values.worker.messageTimeoutSeconds .Values.worker.drainMarginSeconds }}
{{- end }}

{{/* Above the drain, so the kubelet's SIGKILL never lands on a worker still settling messages. */}}
{{- define "trawl.terminationGraceSeconds" -}}
{{- add (include "trawl.drainSeconds" . | int) .Values.worker.terminationMarginSeconds }}
{{- end }}

{{/* The effective prefetch of a stage. Call with (list $ "fetch"). */}}
{{- define "trawl.prefetch" -}}
{{- $root := index . 0 }}{{ $stage := index . 1 }}
{{- $spec := index $root.Values.stages $stage }}
{{- if eq $stage "fetch-browser" }}
{{- $root.Values.browser.sessions }}
{{- else if $spec.prefetch }}
{{- $spec.prefetch }}
{{- else }}
{{- $root.Values.broker.prefetch }}
{{- end }}
{{- end }}

{{/* "keda", "hpa" or "none": autoscaling.engine with `auto` resolved against the cluster's APIs. */}}
{{- define "trawl.autoscalingEngine" -}}
{{- $engine := .Values.autoscaling.engine }}
{{- if eq $engine "auto" }}
{{- if .Capabilities.APIVersions.Has "keda.sh/v1alpha1" }}keda{{ else }}hpa{{ end }}
{{- else }}
{{- $engine }}
{{- end }}
{{- end }}

{{/* "true" when a stage is autoscaled (by either engine), else empty. Call with (list $ "fetch"). */}}
{{- define "trawl.stageAutoscaled" -}}
{{- $root := index . 0 }}{{ $stage := index . 1 }}
{{- $spec := index $root.Values.stages $stage }}
{{- if and $spec.autoscaling.enabled (ne (include "trawl.autoscalingEngine" $root) "none") }}true{{ end }}
{{- end }}

{{/* An auto|true|false switch resolved against an API group/version: "true" or empty. */}}
{{- define "trawl.whenApi" -}}
{{- $root := index . 0 }}{{ $switch := index . 1 }}{{ $api := index . 2 }}
{{- if eq (toString $switch) "auto" }}
{{- if $root.Capabilities.APIVersions.Has $api }}true{{ end }}
{{- else if eq (toString $switch) "true" }}true
{{- end }}
{{- end }}

{{- define "trawl.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else }}
{{- include "trawl.componentName" (list . "connections") }}
{{- end }}
{{- end }}

{{/*
Settings the chart computes; .Values.config may not set them (one place per setting). Values are
strings: environment variables are strings, and the workers parse them as TOML.
*/}}
{{- define "trawl.computedConfig" -}}
{{- $out := dict }}
{{- $_ := set $out "TRAWL__METRICS__ADDR" (printf "0.0.0.0:%v" .Values.metrics.port) }}
{{- $_ := set $out "TRAWL__BROKER__NAMESPACE" .Values.broker.namespace }}
{{- $_ := set $out "TRAWL__BROKER__PREFETCH" (toString .Values.broker.prefetch) }}
{{- $_ := set $out "TRAWL__BROKER__MESSAGE_TIMEOUT_SECS" (toString .Values.worker.messageTimeoutSeconds) }}
{{- $_ := set $out "TRAWL__BROKER__SHUTDOWN_GRACE_SECS" (include "trawl.drainSeconds" .) }}
{{- $_ := set $out "TRAWL__OUTPUT__URL" (printf "file://%s" .Values.output.mountPath) }}
{{- $_ := set $out "RUST_LOG" .Values.logs.level }}
{{- $_ := set $out "TRAWL_LOG_FORMAT" .Values.logs.format }}
{{- toJson $out }}
{{- end }}

{{/*
The API's settings (shared/config's [api]), from api.*: environment of the API's pods only, so a
changed limit rolls the API and not the workers.
*/}}
{{- define "trawl.apiConfig" -}}
{{- $a := .Values.api }}
{{- if eq (int $a.port) (int .Values.metrics.port) }}
{{- fail (printf "api.port (%v) must differ from metrics.port: the API and its /metrics, /healthz, /readyz and /drain listen on separate ports" $a.port) }}
{{- end }}
{{- $out := dict }}
{{- $_ := set $out "TRAWL__API__ADDR" (printf "0.0.0.0:%v" $a.port) }}
{{- $_ := set $out "TRAWL__API__RATE_PER_SEC" (toString (int64 $a.limits.ratePerSecond)) }}
{{- $_ := set $out "TRAWL__API__MAX_BODY_BYTES" (toString (int64 $a.limits.maxBodyBytes)) }}
{{- $_ := set $out "TRAWL__API__MAX_QUESTIONS" (toString (int64 $a.limits.maxQuestions)) }}
{{- $_ := set $out "TRAWL__API__IDEMPOTENCY_TTL_SECS" (toString (int64 $a.limits.idempotencyTtlSeconds)) }}
{{- toJson $out }}
{{- end }}

{{/* Pod-level security: no root, no privilege, the runtime's seccomp profile. */}}
{{- define "trawl.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65534
runAsGroup: 65534
fsGroup: 65534
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "trawl.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65534
runAsGroup: 65534
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The peers of "the internet": everything but networkPolicy.blockedRanges, per address family. */}}
{{- define "trawl.internetPeers" -}}
{{- $v4 := list }}{{ $v6 := list }}
{{- range .Values.networkPolicy.blockedRanges }}
{{- if contains ":" . }}{{ $v6 = append $v6 . }}{{ else }}{{ $v4 = append $v4 . }}{{ end }}
{{- end }}
- ipBlock:
    cidr: 0.0.0.0/0
    {{- with $v4 }}
    except: {{- toYaml . | nindent 6 }}
    {{- end }}
- ipBlock:
    cidr: ::/0
    {{- with $v6 }}
    except: {{- toYaml . | nindent 6 }}
    {{- end }}
{{- end }}

{{/*
Refuses a non-secret environment entry (config.*, stages.*.env, api.env) that the chart computes
itself or that looks like a credential: those never belong in a ConfigMap or a pod spec.
Call with (list $ "config" KEY VALUE computedDict); renders nothing.
*/}}
{{- define "trawl.checkPlainEnv" -}}
{{- $where := index . 1 }}{{ $key := index . 2 }}{{ $value := index . 3 }}{{ $computed := index . 4 }}
{{- if hasKey $computed $key }}
{{- fail (printf "%s.%s is set by the chart; use its own value instead (metrics.port, broker.namespace, broker.prefetch or stages.<name>.prefetch, worker.messageTimeoutSeconds, worker.drainMarginSeconds, output.mountPath, logs.level, logs.format)" $where $key) }}
{{- end }}
{{- if hasPrefix "TRAWL__API__" $key }}
{{- fail (printf "%s.%s is set by the chart from api.port and api.limits.*; set those instead" $where $key) }}
{{- end }}
{{- if has $key (list "TRAWL__BROKER__URL" "TRAWL__STORE__URL" "TRAWL_RABBITMQ_MANAGEMENT_URL") }}
{{- fail (printf "%s.%s belongs in the Secret: secrets.brokerUrl, secrets.storeUrl, secrets.rabbitmqManagementUrl or existingSecret" $where $key) }}
{{- end }}
{{- if regexMatch "(?i)(PASSWORD|SECRET|TOKEN|API_KEY|CREDENTIALS?)$" $key }}
{{- fail (printf "%s.%s looks like a credential: put it in secrets.extra (or the existing Secret)" $where $key) }}
{{- end }}
{{- if regexMatch "://[^/@\\s]*:[^/@\\s]*@" (toString $value) }}
{{- fail (printf "%s.%s holds a URL with a password: put it in secrets.extra (or the existing Secret)" $where $key) }}
{{- end }}
{{- end }}
