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
{{- $_ := set $out "TRAWL__BROKER__MAX_WAITING" (toString .Values.broker.maxWaiting) }}
{{- $_ := set $out "TRAWL__BROKER__MESSAGE_TIMEOUT_SECS" (toString .Values.worker.messageTimeoutSeconds) }}
{{- $_ := set $out "TRAWL__BROKER__SHUTDOWN_GRACE_SECS" (include "trawl.drainSeconds" .) }}
{{- $_ := set $out "TRAWL__OUTPUT__URL" (include "trawl.outputUrl" .) }}
{{- if eq (include "trawl.outputScheme" .) "s3" }}
{{- $s3 := .Values.output.s3 }}
{{- with $s3.endpoint }}{{ $_ := set $out "TRAWL__OUTPUT__ENDPOINT" . }}{{ end }}
{{- with $s3.region }}{{ $_ := set $out "TRAWL__OUTPUT__REGION" . }}{{ end }}
{{- /* S3-compatible servers answer at endpoint/bucket; AWS wants bucket.endpoint. */ -}}
{{- if not (kindIs "invalid" $s3.pathStyle) }}
{{- $_ := set $out "TRAWL__OUTPUT__PATH_STYLE" (toString $s3.pathStyle) }}
{{- else if $s3.endpoint }}
{{- $_ := set $out "TRAWL__OUTPUT__PATH_STYLE" "true" }}
{{- end }}
{{- if $s3.allowHttp }}{{ $_ := set $out "TRAWL__OUTPUT__ALLOW_HTTP" "true" }}{{ end }}
{{- end }}
{{- /* Only when asked for: workers that predate the setting refuse unknown keys. */ -}}
{{- with .Values.broker.resultsQueue }}
{{- if .enabled }}
{{- $_ := set $out "TRAWL__BROKER__RESULTS_QUEUE" "true" }}
{{- $_ := set $out "TRAWL__BROKER__RESULTS_MAX_LENGTH" (toString (int64 .maxLength)) }}
{{- $_ := set $out "TRAWL__BROKER__RESULTS_TTL_SECS" (toString (int64 .ttlSeconds)) }}
{{- end }}
{{- end }}
{{- $_ := set $out "RUST_LOG" .Values.logs.level }}
{{- $_ := set $out "TRAWL_LOG_FORMAT" .Values.logs.format }}
{{- toJson $out }}
{{- end }}

{{/* How to say, in a refusal, what to set instead. */}}
{{- define "trawl.outputAdvice" -}}
set output.url to s3://BUCKET/PREFIX (with output.s3.endpoint for an S3-compatible server, credentials through output.s3.existingSecret or an IRSA role on serviceAccount.annotations), gs://BUCKET/PREFIX or az://CONTAINER/PREFIX; or give output.existingClaim a ReadWriteMany PersistentVolumeClaim that every pod mounts (deploy/README.md, "Results: the object store")
{{- end }}

{{/* "s3", "gs", "az" or "file": the scheme of output.url (file when only a claim is given). */}}
{{- define "trawl.outputScheme" -}}
{{- $url := .Values.output.url }}
{{- if $url }}{{ regexReplaceAll "^([a-zA-Z0-9]+)://.*$" $url "${1}" | lower }}{{ else }}file{{ end }}
{{- end }}

{{/*
The object store's URL (TRAWL__OUTPUT__URL), after refusing values in which the pods would not
share it: clean writes the documents synthesize reads, the API and `trawl results` read what
synthesize wrote, and every worker stops when it cannot see its peers' probe objects. Anything
less than one store for the whole release installs a fleet that never finishes a job.
*/}}
{{- define "trawl.outputUrl" -}}
{{- $o := .Values.output }}
{{- $advice := include "trawl.outputAdvice" . }}
{{- $url := $o.url }}
{{- if and (not $url) (not $o.existingClaim) }}
{{- fail (printf "output.url is not set. Every pod of the release reads or writes results, so they all need one shared object store, and the chart cannot guess which: %s" $advice) }}
{{- end }}
{{- $mount := trimSuffix "/" $o.mountPath }}
{{- if not $url }}{{ $url = printf "file://%s" $mount }}{{ end }}
{{- if not (regexMatch "^(s3|gs|az|file)://" $url) }}
{{- fail (printf "output.url %q: the chart takes s3://, gs://, az:// or file:// (memory:// and the like are one process's own store, never shared); %s" $url $advice) }}
{{- end }}
{{- if regexMatch "^[a-z0-9]+://[^/]*@" $url }}
{{- fail "output.url must not carry credentials: give S3 keys through output.s3.existingSecret (a Secret, read by secretKeyRef) or the pod's identity (serviceAccount.annotations), never in the URL, which lands in a ConfigMap" }}
{{- end }}
{{- $scheme := include "trawl.outputScheme" . }}
{{- if and (ne $scheme "file") (not (regexMatch "^[a-z0-9]+://[^/]+" $url)) }}
{{- fail (printf "output.url %q names no bucket: write %s://BUCKET/PREFIX" $url $scheme) }}
{{- end }}
{{- $s3 := $o.s3 }}
{{- if and (ne $scheme "s3") (or $s3.endpoint $s3.region (not (kindIs "invalid" $s3.pathStyle)) $s3.allowHttp $s3.existingSecret) }}
{{- fail (printf "output.s3.* apply to s3:// URLs only, and output.url is %q. gs:// and az:// take their credentials from the pod's workload identity or from variables in the connections Secret (secrets.extra or existingSecret: GOOGLE_SERVICE_ACCOUNT_KEY, AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY)" $url) }}
{{- end }}
{{- if and (hasPrefix "http://" $s3.endpoint) (not $s3.allowHttp) }}
{{- fail (printf "output.s3.endpoint %s is plain HTTP, which the workers refuse unless output.s3.allowHttp is true: set it (objects and request signatures then cross the network unencrypted, acceptable inside a cluster), or use https://" $s3.endpoint) }}
{{- end }}
{{- if and $s3.existingSecret (hasKey .Values.serviceAccount.annotations "eks.amazonaws.com/role-arn") }}
{{- fail "output.s3.existingSecret and an IRSA role (serviceAccount.annotations eks.amazonaws.com/role-arn) are both set: the static keys would win and the role would go unused. Keep one" }}
{{- end }}
{{- if eq $scheme "file" }}
{{- if $o.url }}
{{- if ne (trimSuffix "/" (trimPrefix "file://" $url)) $mount }}
{{- fail (printf "output.url %s is not where the chart mounts the output volume: a file:// URL must be file://%s (output.mountPath)" $url $mount) }}
{{- end }}
{{- end }}
{{- if not $o.existingClaim }}
{{- include "trawl.checkEmptyDirOutput" . }}
{{- end }}
{{- else if $o.existingClaim }}
{{- fail (printf "output.existingClaim %q is only for file:// output, and output.url is %s: drop the claim (objects go to the bucket) or set output.url to file://%s" $o.existingClaim $url $mount) }}
{{- end }}
{{- $url }}
{{- end }}

{{/*
file:// on an emptyDir is each pod's own disk: refused unless the whole release is one pod that
nothing scales. Renders nothing.
*/}}
{{- define "trawl.checkEmptyDirOutput" -}}
{{- $pods := 0 }}
{{- $who := list }}
{{- $scaled := list }}
{{- range $stage := splitList " " (include "trawl.stageNames" .) }}
{{- $spec := index $.Values.stages $stage }}
{{- if $spec.enabled }}
{{- if include "trawl.stageAutoscaled" (list $ $stage) }}
{{- $scaled = append $scaled (printf "stages.%s" $stage) }}
{{- else if gt (int $spec.replicas) 0 }}
{{- $pods = add $pods $spec.replicas }}
{{- $who = append $who (printf "%s %v" $stage $spec.replicas) }}
{{- end }}
{{- end }}
{{- end }}
{{- if .Values.monitor.enabled }}
{{- $pods = add $pods 1 }}
{{- $who = append $who "monitor 1" }}
{{- end }}
{{- if .Values.api.enabled }}
{{- if .Values.api.autoscaling.enabled }}
{{- $scaled = append $scaled "api" }}
{{- else if gt (int .Values.api.replicas) 0 }}
{{- $pods = add $pods .Values.api.replicas }}
{{- $who = append $who (printf "api %v" .Values.api.replicas) }}
{{- end }}
{{- end }}
{{- $advice := include "trawl.outputAdvice" . }}
{{- if $scaled }}
{{- fail (printf "output is file:// on a per-pod emptyDir (output.existingClaim is empty) while autoscaling is on for %s: every pod would keep its own results, so what clean writes synthesize never reads and jobs never finish. %s. (An emptyDir serves only a release of one pod that nothing scales.)" (join ", " $scaled) $advice) }}
{{- end }}
{{- if gt (int $pods) 1 }}
{{- fail (printf "output is file:// on a per-pod emptyDir (output.existingClaim is empty) with %v pods (%s): each would keep its own results, so what clean writes synthesize never reads and jobs never finish. %s. (An emptyDir serves only a release of one pod.)" $pods (join ", " $who) $advice) }}
{{- end }}
{{- end }}

{{/* Whether the pods mount an output volume (file:// output): "true" or empty. */}}
{{- define "trawl.outputVolume" -}}
{{- if eq (include "trawl.outputScheme" .) "file" }}true{{ end }}
{{- end }}

{{/*
The S3 keys of output.s3.existingSecret as the standard AWS variables, by secretKeyRef: the keys
never pass through the chart's values, a ConfigMap or the pod spec.
*/}}
{{- define "trawl.outputCredentialsEnv" -}}
{{- $s3 := .Values.output.s3 }}
{{- if and $s3.existingSecret (eq (include "trawl.outputScheme" .) "s3") }}
- name: AWS_ACCESS_KEY_ID
  valueFrom: { secretKeyRef: { name: {{ $s3.existingSecret }}, key: {{ $s3.accessKeyIdKey }} } }
- name: AWS_SECRET_ACCESS_KEY
  valueFrom: { secretKeyRef: { name: {{ $s3.existingSecret }}, key: {{ $s3.secretAccessKeyKey }} } }
{{- with $s3.sessionTokenKey }}
- name: AWS_SESSION_TOKEN
  valueFrom: { secretKeyRef: { name: {{ $s3.existingSecret }}, key: {{ . }} } }
{{- end }}
{{- end }}
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
{{- $_ := set $out "TRAWL__API__QUESTIONS_PER_DAY" (toString (int64 $a.limits.questionsPerDay)) }}
{{- $_ := set $out "TRAWL__API__OPEN_BATCHES" (toString (int64 $a.limits.openBatches)) }}
{{- $_ := set $out "TRAWL__API__HEADER_TIMEOUT_SECS" (toString (int64 $a.limits.headerTimeoutSeconds)) }}
{{- $_ := set $out "TRAWL__API__IDLE_TIMEOUT_SECS" (toString (int64 $a.limits.idleTimeoutSeconds)) }}
{{- $_ := set $out "TRAWL__API__MAX_CONNECTIONS" (toString (int64 $a.limits.maxConnections)) }}
{{- $_ := set $out "TRAWL__API__MAX_CONNECTIONS_PER_CLIENT" (toString (int64 $a.limits.maxConnectionsPerClient)) }}
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
{{- fail (printf "%s.%s is set by the chart; use its own value instead (metrics.port, broker.namespace, broker.prefetch or stages.<name>.prefetch, broker.maxWaiting, worker.messageTimeoutSeconds, worker.drainMarginSeconds, output.*, broker.resultsQueue.*, logs.level, logs.format)" $where $key) }}
{{- end }}
{{- /* Refused even when unset above: a value here would bypass the checks of output.*. */ -}}
{{- if has $key (list "TRAWL__OUTPUT__URL" "TRAWL__OUTPUT__ENDPOINT" "TRAWL__OUTPUT__REGION" "TRAWL__OUTPUT__PATH_STYLE" "TRAWL__OUTPUT__ALLOW_HTTP") }}
{{- fail (printf "%s.%s is set by the chart from output.url and output.s3.* (endpoint, region, pathStyle, allowHttp); set those instead" $where $key) }}
{{- end }}
{{- if eq $key "TRAWL__BROKER__MAX_IN_FLIGHT_BYTES" }}
{{- fail (printf "%s.%s is set by the chart per stage; set stages.<name>.maxInFlightBytes instead" $where $key) }}
{{- end }}
{{- if hasPrefix "TRAWL__BROKER__RESULTS_" $key }}
{{- fail (printf "%s.%s is set by the chart from broker.resultsQueue.* (enabled, maxLength, ttlSeconds); set those instead" $where $key) }}
{{- end }}
{{- if hasPrefix "AWS_" $key }}
{{- fail (printf "%s.%s: the object store's AWS settings come from output.s3.* (endpoint, region, allowHttp), its keys from output.s3.existingSecret, a role from serviceAccount.annotations (IRSA)" $where $key) }}
{{- end }}
{{- if hasPrefix "TRAWL__API__" $key }}
{{- fail (printf "%s.%s is set by the chart from api.port and api.limits.*; set those instead" $where $key) }}
{{- end }}
{{- if has $key (list "TRAWL__BROKER__URL" "TRAWL__STORE__URL" "TRAWL_RABBITMQ_MANAGEMENT_URL") }}
{{- fail (printf "%s.%s belongs in the Secret: secrets.brokerUrl, secrets.storeUrl, secrets.rabbitmqManagementUrl or existingSecret" $where $key) }}
{{- end }}
{{- if regexMatch "(?i)(PASSWORD|SECRET|TOKEN|API_KEY|CREDENTIALS?|ACCESS_KEY|KEY_ID|SECRET_KEY|ACCOUNT_KEY|PRIVATE_KEY|SAS_KEY|CONNECTION_STRING)$" $key }}
{{- fail (printf "%s.%s looks like a credential: put it in secrets.extra (or the existing Secret)" $where $key) }}
{{- end }}
{{- if regexMatch "://[^/@\\s]*:[^/@\\s]*@" (toString $value) }}
{{- fail (printf "%s.%s holds a URL with a password: put it in secrets.extra (or the existing Secret)" $where $key) }}
{{- end }}
{{- end }}
