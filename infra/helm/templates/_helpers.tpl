{{- /*
The chart's hand-kept helpers. The bulky bodies (RBAC rules, tenant roles, the confinement policy,
alerts, dashboard) and the defaults are generated from infra/ into _generated.tpl by
scripts/ship/helm/generate.ts; these helpers mirror resolveEchoperatorProps (infra/props.ts): the same
defaults, the same names, and one `fail` (templates/validate/values.yaml, rendered first) giving
every refusal at once, each naming the key and the way out as the synth's does, for the rules
across values that the chart's values.schema.json leaves to them. test/e2e/helm-equivalence.test.ts checks that `helm template` and
`npm run synth` give the same objects for the same values.
*/ -}}

{{- /* Helm's scaffold names: name = nameOverride or the chart's; fullname from the release. */ -}}
{{- define "echoperator.name" -}}
{{- default .Chart.Name (get .Values "nameOverride") | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "echoperator.fullname" -}}
{{- if get .Values "fullnameOverride" }}
{{- get .Values "fullnameOverride" | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name (get .Values "nameOverride") }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Whole seconds as a Prometheus duration, as alerts.ts writes them: 300 -> 5m, 90 -> 90s. */ -}}
{{- define "echoperator.duration" -}}
{{- $s := int . }}
{{- if eq (mod $s 3600) 0 }}{{ div $s 3600 }}h{{ else if eq (mod $s 60) 0 }}{{ div $s 60 }}m{{ else }}{{ $s }}s{{ end }}
{{- end }}

{{- /* A Prometheus duration ('30s', '1m30s', '250ms') in milliseconds. */ -}}
{{- define "echoperator.durationMillis" -}}
{{- $units := dict "ms" 1 "s" 1000 "m" 60000 "h" 3600000 }}
{{- $total := 0 }}
{{- range regexFindAll "[0-9]+(ms|s|m|h)" . -1 }}
{{- $total = add $total (mul (int (regexFind "^[0-9]+" .)) (get $units (regexReplaceAll "^[0-9]+" . ""))) }}
{{- end }}
{{- $total }}
{{- end }}

{{- /*
The values with every default filled in (resolveEchoperatorProps), as JSON: templates read it with
`include "echoperator.config" . | fromJson`. Reads values with dig, so `helm lint --strict` finds
no missing key; a key set to null means its default, as in the synth.
*/ -}}
{{- define "echoperator.config" -}}
{{- $v := .Values | toJson | fromJson }}
{{- $d := include "echoperator.defaults" . | fromJson }}
{{- $ns := .Release.Namespace }}
{{- /* Every refusal is collected and given at once, as the synth does, not one per try. */ -}}
{{- $problems := list }}
{{- $setNs := dig "namespace" "" $v }}
{{- if and $setNs (ne $setNs $ns) }}
{{- $problems = append $problems (printf "namespace is %s but the release's namespace is %s: leave namespace unset, or install with -n %s" $setNs $ns $setNs) }}
{{- end }}
{{- $fullname := include "echoperator.fullname" . }}
{{- if or (gt (len $fullname) 55) (not (regexMatch "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$" $fullname)) }}
{{- $problems = append $problems (printf "the install's name %q (fullnameOverride, or the release name and nameOverride) must be a DNS label of at most 55 characters" $fullname) }}
{{- end }}
{{- $image := dig "image" dict $v }}
{{- $repository := get $image "repository" | default $d.imageRepository | toString }}
{{- if has (trimPrefix "docker.io/" $repository) $d.goImages }}
{{- $problems = append $problems (printf "image.repository %s is the Go echoperator's image, which cannot run this install (another program with other settings); leave image.repository unset for %s, or name a copy of that image (docs/migrating.md)" $repository $d.imageRepository) }}
{{- end }}
{{- $reference := printf "%s:%s" $repository (get $image "tag" | default $d.version | toString) }}
{{- if get $image "digest" }}{{ $reference = printf "%s@%s" $repository (get $image "digest") }}{{ end }}
{{- $metrics := dig "metrics" dict $v }}
{{- $m := dict
  "enabled" (ne (toString (get $metrics "enabled")) "false")
  "port" (get $metrics "port" | default $d.metrics.port)
  "path" (get $metrics "path" | default $d.metrics.path)
  "insecurePlainHttp" (eq (toString (get $metrics "insecurePlainHttp")) "true")
  "certSecret" (get $metrics "certSecret")
  "networkPolicy" (dict
    "enabled" (eq (toString (dig "networkPolicy" "enabled" false $metrics)) "true")
    "namespaceLabels" (dig "networkPolicy" "namespaceLabels" nil $metrics | default $d.metricsNetworkPolicy.namespaceLabels)) }}
{{- $mon := dig "monitoring" dict $v }}
{{- range $key := list "port" "path" }}
{{- $given := get $mon $key }}
{{- if and (hasKey $mon $key) (not (kindIs "invalid" $given)) (ne (toString $given) (toString (get $m $key))) }}
{{- $problems = append $problems (printf "monitoring.%s is the Go chart's name for metrics.%s; set metrics.%s (monitoring.%s is %s, metrics.%s %s)" $key $key $key $key (toJson $given) $key (toJson (get $m $key))) }}
{{- end }}
{{- end }}
{{- $monNs := get $mon "namespace" | default $ns }}
{{- $monLabels := get $mon "labels" | default dict }}
{{- $o := dict
  "enabled" (eq (toString (get $mon "enabled")) "true")
  "namespace" $monNs
  "interval" (get $mon "interval" | default $d.monitoring.interval)
  "labels" $monLabels
  "prometheusServiceAccount" (get $mon "prometheusServiceAccount" | default $d.monitoring.prometheusServiceAccount)
  "insecureSkipVerify" (eq (toString (get $mon "insecureSkipVerify")) "true")
  "rules" (dict
    "enabled" (eq (toString (dig "rules" "enabled" false $mon)) "true")
    "labels" (dig "rules" "labels" nil $mon | default $monLabels)
    "runbookUrl" (dig "rules" "runbookUrl" "" $mon | default $d.monitoring.runbookUrl))
  "dashboard" (dict
    "enabled" (eq (toString (dig "dashboard" "enabled" false $mon)) "true")
    "namespace" (dig "dashboard" "namespace" "" $mon | default $monNs)
    "labels" (dig "dashboard" "labels" nil $mon | default $d.monitoring.dashboardLabels)) }}
{{- $ha := dig "ha" dict $v }}
{{- $le := get $ha "leaderElection" | default dict }}
{{- $h := dict
  "enabled" (eq (toString (get $ha "enabled")) "true")
  "replicaCount" (get $ha "replicaCount" | default $d.ha.replicas)
  "leaseDurationSeconds" (get $le "leaseDurationSeconds" | default $d.ha.leaseDurationSeconds)
  "renewDeadlineSeconds" (get $le "renewDeadlineSeconds" | default $d.ha.renewDeadlineSeconds)
  "retryPeriodSeconds" (get $le "retryPeriodSeconds" | default $d.ha.retryPeriodSeconds)
  "leaseName" (get $le "leaseName" | default $d.ha.leaseName) }}
{{- $resources := dig "resources" dict $v }}
{{- $crds := dig "crds" dict $v | default dict }}
{{- $watch := get $v "watchNamespaces" }}
{{- $r := dict
  "name" (include "echoperator.name" .)
  "fullname" $fullname
  "releaseName" .Release.Name
  "namespace" $ns
  "clusterRoleName" (ternary $fullname (printf "%s-%s" $fullname $ns) (eq $fullname $ns))
  "createNamespace" (eq (toString (get $v "createNamespace")) "true")
  "crds" (dict
    "enabled" (ne (toString (get $crds "enabled")) "false")
    "keep" (ne (toString (get $crds "keep")) "false"))
  "version" $d.version
  "image" $reference
  "imagePullPolicy" (get $image "pullPolicy" | default $d.imagePullPolicy)
  "command" (get $v "command" | default $d.command)
  "args" (get $v "args" | default $d.args)
  "numWorkers" (get $v "numWorkers" | default $d.workers)
  "watchNamespaces" $watch
  "logLevel" (get $v "logLevel" | default $d.logLevel)
  "logFormat" (ternary "text" "json" (eq (toString (get $v "env")) "local"))
  "metrics" $m
  "monitoring" $o
  "healthPort" (get $v "healthPort" | default $d.healthPort)
  "resources" (dict
    "requests" (merge (get $resources "requests" | default dict) $d.resources.requests)
    "limits" (merge (get $resources "limits" | default dict) $d.resources.limits))
  "jobImage" (get $v "jobImage" | default $d.jobImage)
  "jobMaxResources" (merge (get $v "jobMaxResources" | default dict) $d.jobMaxResources)
  "ha" $h
  "terminationGracePeriodSeconds" (get $v "terminationGracePeriodSeconds" | default $d.terminationGracePeriodSeconds)
  "confineServiceAccount" (ne (toString (get $v "confineServiceAccount")) "false")
  "tenantRoles" (ne (toString (get $v "tenantRoles")) "false")
  "nodeSelector" (get $v "nodeSelector" | default dict)
  "tolerations" (get $v "tolerations" | default list)
  "affinity" (get $v "affinity")
  "priorityClassName" (get $v "priorityClassName")
  "imagePullSecrets" (get $v "imagePullSecrets" | default list)
  "podAnnotations" (get $v "podAnnotations" | default dict)
  "podLabels" (get $v "podLabels" | default dict)
  "extraEnv" (get $v "extraEnv" | default list) }}
{{- /* The leader alerts' for: alerts.ts handoverSeconds. */ -}}
{{- $worst := add (mul 1000 (add $h.leaseDurationSeconds $h.retryPeriodSeconds)) (mul 2 (include "echoperator.durationMillis" $o.interval)) }}
{{- $_ := set $r "handoverFor" (include "echoperator.duration" (max 120 (mul 60 (div (add $worst 59999) 60000)))) }}
{{- $problems = concat $problems (include "echoperator.problems" $r | fromJsonArray) }}
{{- if $problems }}
{{- fail (printf "the values are refused: %s" (join "; " $problems)) }}
{{- end }}
{{- toJson $r }}
{{- end }}

{{- /* The rules across values of resolveEchoperatorProps that a JSON schema cannot say, each
refusal worded as the synth words it (helm-equivalence.test.ts compares them), as a JSON list. */ -}}
{{- define "echoperator.problems" -}}
{{- $problems := list }}
{{- $m := .metrics }}
{{- if and $m.enabled (eq (int $m.port) (int .healthPort)) }}
{{- $problems = append $problems (printf "metrics.port and healthPort must differ, both are %v" .healthPort) }}
{{- end }}
{{- if and $m.certSecret $m.insecurePlainHttp }}
{{- $problems = append $problems "metrics.certSecret and metrics.insecurePlainHttp exclude each other: plain HTTP uses no certificate" }}
{{- end }}
{{- if and $m.networkPolicy.enabled (not $m.networkPolicy.namespaceLabels) }}
{{- $problems = append $problems "metrics.networkPolicy.namespaceLabels must hold at least one label: an empty selector would admit every namespace" }}
{{- end }}
{{- $h := .ha }}
{{- if le (int $h.leaseDurationSeconds) (int $h.renewDeadlineSeconds) }}
{{- $problems = append $problems (printf "ha.leaderElection.leaseDurationSeconds (%v) must be greater than ha.leaderElection.renewDeadlineSeconds (%v): a standby must wait longer than a leader keeps leading without renewing, or two leaders can run at once" $h.leaseDurationSeconds $h.renewDeadlineSeconds) }}
{{- end }}
{{- if le (mul 10 (int $h.renewDeadlineSeconds)) (mul 12 (int $h.retryPeriodSeconds)) }}
{{- $problems = append $problems (printf "ha.leaderElection.renewDeadlineSeconds (%v) must be greater than 1.2 x ha.leaderElection.retryPeriodSeconds (%v), so a leader gets more than one try to renew" $h.renewDeadlineSeconds (mulf 1.2 $h.retryPeriodSeconds)) }}
{{- end }}
{{- $o := .monitoring }}
{{- if and $o.dashboard.enabled (not $o.dashboard.labels) }}
{{- $problems = append $problems "monitoring.dashboard.labels must hold at least one label: Grafana's sidecar finds dashboards by label" }}
{{- end }}
{{- if and $o.rules.enabled (not $m.enabled) }}
{{- $problems = append $problems "monitoring.rules.enabled needs metrics.enabled: the alerts read the metrics (EchoperatorDown would fire for good)" }}
{{- end }}
{{- if $o.enabled }}
{{- if not $m.enabled }}
{{- $problems = append $problems "monitoring.enabled needs metrics.enabled: the ServiceMonitor scrapes the metrics Service" }}
{{- end }}
{{- if and $m.certSecret (ne $o.namespace .namespace) }}
{{- $problems = append $problems (printf "monitoring.namespace must be the install's namespace (%s) with metrics.certSecret, got %s: prometheus-operator reads the ServiceMonitor's CA from a Secret in the ServiceMonitor's own namespace" .namespace (toJson $o.namespace)) }}
{{- end }}
{{- if and (not $m.certSecret) (not $m.insecurePlainHttp) (not $o.insecureSkipVerify) }}
{{- $problems = append $problems "monitoring.enabled: without metrics.certSecret the operator serves a self-signed certificate that Prometheus cannot verify. Set metrics.certSecret to a kubernetes.io/tls Secret (e.g. from cert-manager) with a ca.crt, or set monitoring.insecureSkipVerify: true to scrape without verifying (the scraper's token then goes to whichever endpoint answers)" }}
{{- end }}
{{- end }}
{{- range $i, $t := .tolerations }}
{{- $op := get $t "operator" | default "Equal" }}
{{- if and (not (get $t "key")) (ne $op "Exists") }}{{ $problems = append $problems (printf "tolerations[%d].operator must be Exists when key is empty (it then tolerates every taint)" $i) }}{{ end }}
{{- if and (eq $op "Exists") (get $t "value") }}{{ $problems = append $problems (printf "tolerations[%d].value must be empty when operator is Exists, got %s" $i (toJson (get $t "value"))) }}{{ end }}
{{- if and (hasKey $t "tolerationSeconds") (ne (toString (get $t "effect")) "NoExecute") }}{{ $problems = append $problems (printf "tolerations[%d].tolerationSeconds applies only with effect NoExecute, got effect %s" $i (ternary (toJson (get $t "effect")) "undefined" (hasKey $t "effect"))) }}{{ end }}
{{- end }}
{{- $secrets := list }}
{{- range .imagePullSecrets }}
{{- if has .name $secrets }}{{ $problems = append $problems (printf "imagePullSecrets lists %s twice" .name) }}{{ end }}
{{- $secrets = append $secrets .name }}
{{- end }}
{{- $seen := list }}
{{- range .watchNamespaces | default list }}
{{- if has . $seen }}{{ $problems = append $problems (printf "watchNamespaces lists %s twice" .) }}{{ end }}
{{- $seen = append $seen . }}
{{- end }}
{{- $installLabels := list "app.kubernetes.io/name" "app.kubernetes.io/instance" "app.kubernetes.io/version" "app.kubernetes.io/component" "app.kubernetes.io/part-of" "app.kubernetes.io/managed-by" }}
{{- range $key, $_ := .podLabels }}
{{- if has $key $installLabels }}{{ $problems = append $problems (printf "podLabels must not set %s: the install sets it (app.kubernetes.io/name and /instance select the operator's pods for the Deployment, Service, PodDisruptionBudget and NetworkPolicy)" $key) }}{{ end }}
{{- end }}
{{- if hasKey .podAnnotations "echoperator.mmontes.io/config-checksum" }}
{{- $problems = append $problems "podAnnotations must not set echoperator.mmontes.io/config-checksum: the install sets it to the settings' checksum, which rolls the pods when a setting changes" }}
{{- end }}
{{- $podEnv := list "POD_NAME" "POD_NAMESPACE" "NAMESPACE" "HA_NODE_ID" }}
{{- $installEnv := list "NUM_WORKERS" "WATCH_NAMESPACES" "LOG_LEVEL" "LOG_FORMAT" "METRICS_ENABLED" "METRICS_PATH" "METRICS_PORT" "METRICS_INSECURE_PLAIN_HTTP" "HEALTH_PORT" "JOB_IMAGE" "HA_ENABLED" "METRICS_CERT_DIR" "HA_LEASE_LOCK_NAME" "HA_LEASE_DURATION_SECONDS" "HA_RENEW_DEADLINE_SECONDS" "HA_RETRY_PERIOD_SECONDS" }}
{{- range $i, $e := .extraEnv }}
{{- if has $e.name $podEnv }}{{ $problems = append $problems (printf "extraEnv[%d].name %s is set by the install itself, from the downward API: the pod's identity, which leader election uses" $i $e.name) }}{{ end }}
{{- if has $e.name $installEnv }}{{ $problems = append $problems (printf "extraEnv[%d].name %s is set by the install itself, in the settings ConfigMap: env overrides envFrom, so it would silently replace the validated setting and escape the settings checksum; set it through its values key" $i $e.name) }}{{ end }}
{{- end }}
{{- toJson $problems }}
{{- end }}

{{- /* The labels of every object (the install's labels in infra/echoperator.ts). */ -}}
{{- define "echoperator.labels" -}}
{{ include "echoperator.selectorLabels" . }}
app.kubernetes.io/version: {{ .version | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/part-of: echoperator
app.kubernetes.io/managed-by: Helm
{{- end }}

{{- /* The labels that select the operator's pods. */ -}}
{{- define "echoperator.selectorLabels" -}}
app.kubernetes.io/name: {{ .name | quote }}
app.kubernetes.io/instance: {{ .releaseName | quote }}
{{- end }}

{{- /* The settings ConfigMap's data: operatorSettings (infra/props.ts), as a JSON map. */ -}}
{{- define "echoperator.settings" -}}
{{- $s := dict
  "NUM_WORKERS" (toString .numWorkers)
  "WATCH_NAMESPACES" (join "," (.watchNamespaces | default list))
  "LOG_LEVEL" .logLevel
  "LOG_FORMAT" .logFormat
  "METRICS_ENABLED" (toString .metrics.enabled)
  "METRICS_PATH" .metrics.path
  "METRICS_PORT" (toString .metrics.port)
  "METRICS_INSECURE_PLAIN_HTTP" (toString .metrics.insecurePlainHttp)
  "HEALTH_PORT" (toString .healthPort)
  "JOB_IMAGE" .jobImage
  "HA_ENABLED" (toString .ha.enabled) }}
{{- if .metrics.certSecret }}{{ $_ := set $s "METRICS_CERT_DIR" "/etc/echoperator/metrics-cert" }}{{ end }}
{{- if .ha.enabled }}
{{- $_ := set $s "HA_LEASE_LOCK_NAME" .ha.leaseName }}
{{- $_ := set $s "HA_LEASE_DURATION_SECONDS" (toString .ha.leaseDurationSeconds) }}
{{- $_ := set $s "HA_RENEW_DEADLINE_SECONDS" (toString .ha.renewDeadlineSeconds) }}
{{- $_ := set $s "HA_RETRY_PERIOD_SECONDS" (toString .ha.retryPeriodSeconds) }}
{{- end }}
{{- toJson $s }}
{{- end }}

{{- /* settingsChecksum (infra/props.ts): sha256 of the JSON of the [key, value] pairs, keys sorted. */ -}}
{{- define "echoperator.settingsChecksum" -}}
{{- $s := include "echoperator.settings" . | fromJson }}
{{- $pairs := list }}
{{- range $k := keys $s | sortAlpha }}{{ $pairs = append $pairs (list $k (get $s $k)) }}{{ end }}
{{- /* Go's JSON escapes <, > and & (\u003c...), JavaScript's does not: the same text for both. */ -}}
{{- toJson $pairs | replace "\\u003c" "<" | replace "\\u003e" ">" | replace "\\u0026" "&" | sha256sum }}
{{- end }}
