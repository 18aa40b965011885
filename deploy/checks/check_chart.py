#!/usr/bin/env python3
"""Offline checks of the Helm chart helm/trawl (run through scripts/check-chart).

Renders the chart with real `helm template` for each ci/*-values.yaml (default-values.yaml is the
chart's defaults plus the output.url they lack; scaled-values.yaml a KEDA fleet on AWS S3 under an
IRSA role; s3-compatible-values.yaml an in-cluster S3 server with keys from a Secret), each without
and with the KEDA and Prometheus Operator APIs announced, plus the defaults on a ReadWriteMany claim
and a single-pod release on an emptyDir; lints the values files, validates every built-in object
against the Kubernetes JSON schemas (kubernetes-validate, strict), checks the structure of the CRD
objects (ScaledObject, TriggerAuthentication, ServiceMonitor, PrometheusRule) here, and asserts
what the chart promises operators: every pod shares one object store and reaches it (settings,
credentials by secretKeyRef or the service account's IAM role, egress), workers outlive their
longest message on shutdown, each stage autoscales on its own queue counting unacknowledged
messages, fetchers cannot reach cluster, private or metadata addresses, no secret lands in a
ConfigMap, one dashboard ConfigMap per dashboard file, the API (`trawl serve`) is reachable on its
own port with /drain and the probes kept off it and out of the Ingress, and the chart refuses bad
values: the schema's, and any in which pods would not share results (no output.url, file:// on an
emptyDir with more than one pod or with autoscaling).

Prints one line per check (PASS, FAIL or SKIP) and a closing `N passed, N failed, N skipped`;
exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import base64
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

try:
    import kubernetes_validate
except ImportError:  # the venv of scripts/ops-tools has it; a bare python3 may not
    kubernetes_validate = None

STAGES = ["search", "fetch", "fetch-browser", "clean", "synthesize"]
QUEUE_SUFFIX = {
    "search": "search",
    "fetch": "fetch",
    "fetch-browser": "fetch.browser",
    "clean": "clean",
    "synthesize": "synthesize",
}
OPTIONAL_APIS = ["keda.sh/v1alpha1", "monitoring.coreos.com/v1"]
CRD_KINDS = {"ScaledObject", "TriggerAuthentication", "ServiceMonitor", "PrometheusRule"}
# What a fetcher must never reach: private, cluster, loopback and link-local (cloud metadata).
FETCH_BLOCKED_V4 = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16", "127.0.0.0/8"]
FETCH_BLOCKED_V6 = ["fc00::/7"]
RECOMMENDED_LABELS = [
    "app.kubernetes.io/name",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/managed-by",
    "helm.sh/chart",
]
RELEASE = "trawl"
NAMESPACE = "research"
# helm processes at once: enough to overlap their start-up, few enough for a two-core machine.
HELM_JOBS = 6
# The values files rendered (and linted) in full, each without and with the optional APIs.
CI_FILES = ["default-values.yaml", "scaled-values.yaml", "s3-compatible-values.yaml"]
# Renders beside them, without the optional APIs: values given inline, checked in full or alone.
EXTRA_RENDERS = {
    # Defaults on a ReadWriteMany claim: what a release that had output.existingClaim keeps.
    "shared-claim": {"output": {"existingClaim": "trawl-results"}},
    # The one case an emptyDir may serve: a release of one pod that nothing scales.
    "single-pod": {
        "output": {"url": "file:///var/lib/trawl"},
        "autoscaling": {"engine": "none"},
        "stages": {s: {"enabled": s == "search", "replicas": 1} for s in STAGES},
        "monitor": {"enabled": False},
        "api": {"enabled": False},
    },
}
# A variable that holds a credential, by the name the chart refuses in non-secret values.
CREDENTIAL_NAME = re.compile(r"(?i)(PASSWORD|SECRET|TOKEN|API_KEY|CREDENTIALS?|ACCESS_KEY|KEY_ID|SECRET_KEY|ACCOUNT_KEY|PRIVATE_KEY|SAS_KEY|CONNECTION_STRING)$")
AWS_KEYS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")
IRSA = "eks.amazonaws.com/role-arn"


class Report:
    def __init__(self) -> None:
        self.passed = self.failed = self.skipped = 0

    def check(self, ok: bool, what: str, detail: str = "") -> bool:
        if len(detail) > 600:
            detail = detail[:600] + " …"
        if ok:
            self.passed += 1
            print(f"PASS {what}")
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f": {detail}" if detail else ""))
        return ok

    def skip(self, what: str, why: str) -> None:
        self.skipped += 1
        print(f"SKIP {what}: {why}")

    def note(self, text: str) -> None:
        print(f"NOTE {text}")


def run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True)


def helm_stderr(text: str) -> str:
    """Helm 4 logs an INFO line per symlink it follows; only the rest is worth showing."""
    return "\n".join(
        line for line in text.splitlines() if "found symbolic link in path" not in line
    ).strip()


# ------------------------------------------------------------------------------------------------
# Rendering


class Render:
    def __init__(self, name: str, apis: bool, values: dict, proc):
        self.name = name
        self.apis = apis
        self.values = values  # the values given (files and overrides), not merged with defaults
        self.ok = proc.returncode == 0
        self.error = helm_stderr(proc.stderr)
        self.objects = []
        if self.ok:
            self.objects = [d for d in yaml.safe_load_all(proc.stdout) if d]

    def of_kind(self, kind: str) -> list[dict]:
        return [o for o in self.objects if o.get("kind") == kind]

    def named(self, kind: str, name: str) -> dict | None:
        return next((o for o in self.of_kind(kind) if o["metadata"]["name"] == name), None)

    def component(self, kind: str, component: str) -> dict | None:
        return next(
            (
                o
                for o in self.of_kind(kind)
                if o["metadata"].get("labels", {}).get("app.kubernetes.io/component") == component
            ),
            None,
        )


def deep_merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in (over or {}).items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def stage_chart(chart: Path, report: Report) -> tuple[Path, tempfile.TemporaryDirectory | None]:
    """The chart to render. Its dashboards/ and files/alerts.yml are symlinks into deploy/; while
    a target is missing Helm refuses to load the chart at all, so render a copy without them."""
    dangling = [p for p in (chart / "dashboards", chart / "files" / "alerts.yml") if p.is_symlink() and not p.exists()]
    if not dangling:
        return chart, None
    tmp = tempfile.TemporaryDirectory(prefix="trawl-chart-")
    copy = Path(tmp.name) / chart.name
    shutil.copytree(chart, copy, symlinks=False, ignore_dangling_symlinks=True)
    for p in dangling:
        report.note(f"{p.relative_to(chart)} -> {os.readlink(p)} does not exist yet; rendering a copy of the chart without it")
    return copy, tmp


def render_all(helm: str, chart: Path, kube_version: str, overrides: dict) -> list[Render]:
    configs = []  # (name, values, apis)
    for f in CI_FILES:
        values = yaml.safe_load((chart / "ci" / f).read_text()) or {}
        for apis in (False, True):
            configs.append((f.removesuffix("-values.yaml") + ("+apis" if apis else ""), values, apis))
    configs += [(name, values, False) for name, values in EXTRA_RENDERS.items()]
    tmp = tempfile.mkdtemp(prefix="trawl-values-")
    try:
        jobs = []
        for i, (name, values, apis) in enumerate(configs):
            own = json.loads(json.dumps(values))
            for key, value in overrides.items():
                node = own
                *path, last = key.split(".")
                for part in path:
                    node = node.setdefault(part, {})
                node[last] = value
            f = Path(tmp) / f"values-{i}.yaml"
            f.write_text(yaml.safe_dump(own))
            cmd = [helm, "template", RELEASE, str(chart), "--namespace", NAMESPACE, "--kube-version", kube_version, "-f", str(f)]
            if apis:
                for api in OPTIONAL_APIS:
                    cmd += ["--api-versions", api]
            jobs.append((name, own, apis, cmd))
        with ThreadPoolExecutor(max_workers=HELM_JOBS) as pool:
            procs = list(pool.map(lambda j: run(j[3]), jobs))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return [Render(name, apis, own, proc) for (name, own, apis, _), proc in zip(jobs, procs)]


# ------------------------------------------------------------------------------------------------
# Helpers over rendered objects


def memory_bytes(quantity) -> int | None:
    """A Kubernetes memory quantity (512Mi, 1G, 268435456) in bytes; None when unset."""
    if quantity is None:
        return None
    text = str(quantity)
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    for suffix, factor in sorted(units.items(), key=lambda u: -len(u[0])):
        if text.endswith(suffix):
            return int(float(text[: -len(suffix)]) * factor)
    return int(float(text))


def container_env(container: dict, configmaps: dict[str, dict]) -> dict[str, str]:
    """The environment a container starts with: envFrom ConfigMaps, then `env` on top."""
    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        ref = source.get("configMapRef")
        if ref and ref["name"] in configmaps:
            env.update({k: str(v) for k, v in (configmaps[ref["name"]].get("data") or {}).items()})
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = str(item["value"])
    return env


def secret_values(render: Render) -> list[str]:
    """Every secret string: the rendered Secrets' data, and the values file's `secrets` (which
    covers a release that uses an existing Secret, too)."""
    found = []
    for secret in render.of_kind("Secret"):
        for v in (secret.get("data") or {}).values():
            found.append(base64.b64decode(v).decode())
        found.extend(str(v) for v in (secret.get("stringData") or {}).values())
    given = render.values.get("secrets") or {}
    for key in ("brokerUrl", "storeUrl", "rabbitmqManagementUrl"):
        if given.get(key):
            found.append(str(given[key]))
    found.extend(str(v) for v in (given.get("extra") or {}).values())
    # The password parts alone, so a URL rebuilt around one is caught too.
    for url in list(found):
        m = re.match(r"^[a-z]+://[^/:@]*:([^/@]+)@", url)
        if m:
            found.append(m.group(1))
    return [v for v in found if len(v) >= 6]


def cidrs_of(rule: dict, family_cidr: str) -> tuple[bool, list[str]]:
    for peer in rule.get("to", []):
        block = peer.get("ipBlock")
        if block and block.get("cidr") == family_cidr:
            return True, block.get("except", [])
    return False, []


def selects(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in (selector or {}).items())


# ------------------------------------------------------------------------------------------------
# Checks of one render


def check_render(r: Report, render: Render, chart_values: dict, alerts_file: Path | None, dashboards: list[Path], kube_version: str) -> None:
    tag = f"[{render.name}]"
    if not r.check(render.ok, f"{tag} helm template renders", render.error):
        return
    values = deep_merge(chart_values, render.values)

    # -- schemas --------------------------------------------------------------------------------
    builtin = [o for o in render.objects if o.get("kind") not in CRD_KINDS]
    if kubernetes_validate is None:
        r.skip(f"{tag} built-in objects against the Kubernetes {kube_version} schemas", "kubernetes-validate is not installed (run through scripts/check-chart)")
    else:
        problems = []
        for obj in builtin:
            try:
                kubernetes_validate.validate(obj, kube_version, strict=True)
            except kubernetes_validate.ValidationError as e:
                problems.append(f"{obj['kind']}/{obj['metadata']['name']}: {e.message} at {'/'.join(map(str, e.path))}")
            except Exception as e:  # noqa: BLE001 - a missing schema is a failure too
                problems.append(f"{obj['kind']}/{obj['metadata']['name']}: {e}")
        r.check(not problems, f"{tag} {len(builtin)} built-in objects valid against Kubernetes {kube_version} (strict)", "; ".join(problems))

    unlabelled = [
        f"{o['kind']}/{o['metadata']['name']} lacks {k}"
        for o in render.objects
        for k in RECOMMENDED_LABELS
        if k not in o["metadata"].get("labels", {})
    ]
    r.check(not unlabelled, f"{tag} every object has the recommended labels", "; ".join(unlabelled[:5]))

    configmaps = {c["metadata"]["name"]: c for c in render.of_kind("ConfigMap")}
    deployments = {d["metadata"]["labels"].get("app.kubernetes.io/component"): d for d in render.of_kind("Deployment")}
    api_on = values["api"]["enabled"]
    components = STAGES + ["monitor"] + (["api"] if api_on else [])
    r.check(
        sorted(deployments) == sorted(components),
        f"{tag} one Deployment per stage plus monitor" + (" and api" if api_on else ""),
        f"got {sorted(deployments)}",
    )

    # -- every pod --------------------------------------------------------------------------------
    sa_names = {s["metadata"]["name"] for s in render.of_kind("ServiceAccount") if s.get("automountServiceAccountToken") is False}
    for component, dep in sorted(deployments.items()):
        pod = dep["spec"]["template"]["spec"]
        main = next((c for c in pod["containers"] if c["name"] == component), None)
        if main is None:
            r.check(False, f"{tag} {component}: a container named {component}", f"containers {[c['name'] for c in pod['containers']]}")
            continue
        env = container_env(main, configmaps)
        expected_args = {"monitor": ["monitor"], "api": ["serve"]}.get(component, ["worker", component])
        problems = []
        if main.get("args", [])[: len(expected_args)] != expected_args:
            problems.append(f"args {main.get('args')}")
        if "command" in main:
            problems.append("overrides the image's entrypoint")
        ports = {p.get("name"): p.get("containerPort") for p in main.get("ports", [])}
        if ports.get("metrics") != 9464:
            problems.append(f"port metrics is {ports.get('metrics')}")
        for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"), ("startupProbe", None)):
            get = (main.get(probe) or {}).get("httpGet") or {}
            if not get or (path and get.get("path") != path) or get.get("port") != "metrics":
                problems.append(f"{probe} {get or 'missing'}")
        res = main.get("resources") or {}
        if not res.get("requests") or not res.get("limits"):
            problems.append("resources need requests and limits")
        sc = main.get("securityContext") or {}
        psc = pod.get("securityContext") or {}
        want = {
            "runAsNonRoot": True,
            "runAsUser": 65534,
            "readOnlyRootFilesystem": True,
            "allowPrivilegeEscalation": False,
        }
        for k, v in want.items():
            if sc.get(k, psc.get(k)) != v:
                problems.append(f"securityContext.{k} is {sc.get(k, psc.get(k))!r}")
        if "ALL" not in (sc.get("capabilities") or {}).get("drop", []):
            problems.append("capabilities not dropped")
        if (sc.get("seccompProfile") or psc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            problems.append("seccomp is not RuntimeDefault")
        if pod.get("automountServiceAccountToken") is not False or pod.get("serviceAccountName") not in sa_names:
            problems.append("pod may mount a service account token")
        annotations = dep["spec"]["template"]["metadata"].get("annotations", {})
        if "checksum/config" not in annotations:
            problems.append("no checksum/config annotation")
        if values["metrics"]["podAnnotations"] and annotations.get("prometheus.io/scrape") != "true":
            problems.append("no prometheus.io/scrape annotation")
        if env.get("TRAWL__METRICS__ADDR") != "0.0.0.0:9464":
            problems.append(f"TRAWL__METRICS__ADDR is {env.get('TRAWL__METRICS__ADDR')!r}")
        if not any("secretRef" in s for s in main.get("envFrom", [])):
            problems.append("no Secret in envFrom")
        r.check(not problems, f"{tag} {component}: command, probes, port, resources, security context, config", "; ".join(problems))

        if component == "monitor":
            r.check(dep["spec"].get("replicas") == 1, f"{tag} monitor: exactly one replica", f"replicas {dep['spec'].get('replicas')}")
            continue
        if component == "api":
            check_api_pod(r, tag, dep, main, env, values)
            continue

        # -- graceful shutdown --------------------------------------------------------------------
        grace = pod.get("terminationGracePeriodSeconds")
        timeout = env.get("TRAWL__BROKER__MESSAGE_TIMEOUT_SECS")
        drain = env.get("TRAWL__BROKER__SHUTDOWN_GRACE_SECS")
        ok = (
            isinstance(grace, int)
            and timeout is not None
            and drain is not None
            and grace > int(timeout)
            and grace > int(drain)
            and int(drain) > int(timeout)
        )
        r.check(
            ok,
            f"{tag} {component}: terminationGracePeriodSeconds {grace} > drain {drain} > message timeout {timeout}",
        )
        r.check(
            drain_hook_ok(main, values),
            f"{tag} {component}: preStop runs `trawl drain` on the metrics port over loopback",
            f"preStop {main.get('lifecycle')}",
        )

    # -- the browser pod --------------------------------------------------------------------------
    dep = deployments.get("fetch-browser")
    if dep:
        pod = dep["spec"]["template"]["spec"]
        sidecars = [c for c in pod.get("initContainers", []) if c.get("restartPolicy") == "Always"] + [
            c for c in pod["containers"] if c["name"] != "fetch-browser"
        ]
        webdriver = next((c for c in sidecars if c["name"] == "webdriver"), None)
        worker = next(c for c in pod["containers"] if c["name"] == "fetch-browser")
        env = container_env(worker, configmaps)
        sessions = str(values["browser"]["sessions"])
        problems = []
        if webdriver is None:
            problems.append("no webdriver sidecar")
        else:
            wenv = {e["name"]: e.get("value") for e in webdriver.get("env", [])}
            if wenv.get("SE_NODE_MAX_SESSIONS") != sessions:
                problems.append(f"SE_NODE_MAX_SESSIONS {wenv.get('SE_NODE_MAX_SESSIONS')}")
            if not any(m["mountPath"] == "/dev/shm" for m in webdriver.get("volumeMounts", [])):
                problems.append("/dev/shm not mounted")
        shm = next((v for v in pod.get("volumes", []) if any(m["name"] == v["name"] and m["mountPath"] == "/dev/shm" for m in (webdriver or {}).get("volumeMounts", []))), None)
        if not shm or (shm.get("emptyDir") or {}).get("medium") != "Memory" or str((shm.get("emptyDir") or {}).get("sizeLimit")) != str(values["browser"]["shmSizeLimit"]):
            problems.append(f"/dev/shm volume {shm}")
        for key, want in (
            ("TRAWL__FETCH__WEBDRIVER_URL", f"http://127.0.0.1:{values['browser']['port']}"),
            ("TRAWL__FETCH__BROWSER_SESSIONS", sessions),
            ("TRAWL__BROKER__PREFETCH", sessions),
            ("TRAWL__BROKER__MAX_WAITING", "0"),
        ):
            if env.get(key) != want:
                problems.append(f"{key}={env.get(key)!r}, want {want!r}")
        r.check(not problems, f"{tag} fetch-browser: WebDriver sidecar with {sessions} sessions, /dev/shm in memory, prefetch = sessions, nothing held waiting", "; ".join(problems))

    # Each worker's byte cap is its own stage's, below its memory limit.
    for stage in STAGES:
        if stage not in deployments:
            continue
        spec = values["stages"][stage]
        worker = next(c for c in deployments[stage]["spec"]["template"]["spec"]["containers"] if c["name"] == stage)
        got = container_env(worker, configmaps).get("TRAWL__BROKER__MAX_IN_FLIGHT_BYTES")
        want = spec.get("maxInFlightBytes")
        limit = memory_bytes(((worker.get("resources") or {}).get("limits") or {}).get("memory"))
        problems = []
        if (got is None) != (want is None) or (want is not None and int(got) != int(want)):
            problems.append(f"TRAWL__BROKER__MAX_IN_FLIGHT_BYTES={got!r}, want {want!r}")
        if want is not None and limit is not None and int(want) >= limit // 2:
            problems.append(f"{want} bytes in flight against a memory limit of {limit}")
        r.check(not problems, f"{tag} {stage}: in-flight byte cap {want} below half its memory limit", "; ".join(problems))

    # -- autoscaling ------------------------------------------------------------------------------
    engine = values["autoscaling"]["engine"]
    if engine == "auto":
        engine = "keda" if render.apis else "hpa"
    scaled = render.of_kind("ScaledObject")
    hpas = render.of_kind("HorizontalPodAutoscaler")
    broker_ns = values["broker"]["namespace"]
    if engine == "keda":
        check_keda(r, tag, render, values, scaled, hpas, deployments, broker_ns)
    elif engine == "hpa":
        by_target = {h["spec"]["scaleTargetRef"]["name"]: h for h in hpas}
        problems = []
        for stage in STAGES:
            dname = deployments[stage]["metadata"]["name"]
            hpa = by_target.get(dname)
            if not hpa:
                problems.append(f"{stage}: no HPA")
                continue
            metrics = hpa["spec"].get("metrics", [])
            if not any(m.get("type") == "Resource" and m["resource"]["name"] == "cpu" for m in metrics):
                problems.append(f"{stage}: HPA not on CPU")
            if "replicas" in deployments[stage]["spec"]:
                problems.append(f"{stage}: Deployment sets replicas under an autoscaler")
        if scaled:
            problems.append(f"{len(scaled)} ScaledObjects without KEDA")
        r.check(not problems, f"{tag} no KEDA: one CPU HorizontalPodAutoscaler per stage", "; ".join(problems))
    else:
        r.check(not scaled and not hpas, f"{tag} autoscaling off: no ScaledObject or HPA")
    r.check(
        not any(x["spec"]["scaleTargetRef"]["name"] == deployments["monitor"]["metadata"]["name"] for x in scaled + hpas),
        f"{tag} monitor is never autoscaled",
    )
    if api_on:
        check_api_objects(r, tag, render, deployments["api"], values)

    # -- PodDisruptionBudgets -------------------------------------------------------------------
    pdbs = render.of_kind("PodDisruptionBudget")
    problems = []
    for stage in STAGES + (["api"] if api_on else []):
        labels = deployments[stage]["spec"]["template"]["metadata"]["labels"]
        pdb = [p for p in pdbs if selects(p["spec"]["selector"].get("matchLabels"), labels)]
        if len(pdb) != 1 or "maxUnavailable" not in pdb[0]["spec"]:
            problems.append(f"{stage}: {len(pdb)} PDBs")
    r.check(not problems, f"{tag} one PodDisruptionBudget (maxUnavailable) per stage" + (" and the API" if api_on else ""), "; ".join(problems))

    # -- network policy ---------------------------------------------------------------------------
    check_network(r, tag, render, deployments, values)

    # -- the object store every pod shares ----------------------------------------------------------
    check_output(r, tag, render, deployments, configmaps, values)

    # -- secrets stay out of ConfigMaps -----------------------------------------------------------
    secrets = secret_values(render)
    leaks = []
    for cm in render.of_kind("ConfigMap"):
        for key, text in (cm.get("data") or {}).items():
            for s in secrets:
                if s in str(text):
                    leaks.append(f"{cm['metadata']['name']}/{key}")
            if re.search(r"://[^/@\s\"]*:[^/@\s\"]+@", str(text)):
                leaks.append(f"{cm['metadata']['name']}/{key} holds a URL with a password")
            if key in AWS_KEYS or CREDENTIAL_NAME.search(key):
                leaks.append(f"{cm['metadata']['name']}/{key} is a credential's name")
            if key.startswith("TRAWL__OUTPUT__") and re.match(r"^[a-z0-9]+://[^/]*@", str(text)):
                leaks.append(f"{cm['metadata']['name']}/{key} carries credentials in its URL")
    for dep in deployments.values():
        for c in dep["spec"]["template"]["spec"]["containers"] + dep["spec"]["template"]["spec"].get("initContainers", []):
            for item in c.get("env", []):
                if any(s in str(item.get("value", "")) for s in secrets):
                    leaks.append(f"{dep['metadata']['name']}/{c['name']} env {item['name']}")
                if "value" in item and (item["name"] in AWS_KEYS or CREDENTIAL_NAME.search(item["name"])):
                    leaks.append(f"{dep['metadata']['name']}/{c['name']} env {item['name']} is a credential written into the pod spec")
    if secrets:
        r.check(not leaks, f"{tag} none of {len(secrets)} secret values, and no credential by name, appears in a ConfigMap or a pod spec", "; ".join(sorted(set(leaks))[:5]))
    else:
        r.check(not leaks, f"{tag} no ConfigMap or pod spec holds a URL with a password or a credential by name (secrets come from existing Secrets)", "; ".join(leaks))
    secret_name = None
    main = deployments["search"]["spec"]["template"]["spec"]["containers"][0]
    for s in main.get("envFrom", []):
        if "secretRef" in s:
            secret_name = s["secretRef"]["name"]
    if render.values.get("existingSecret", chart_values.get("existingSecret")):
        r.check(not render.of_kind("Secret") and secret_name == values["existingSecret"], f"{tag} existingSecret {values['existingSecret']!r} is used and no Secret is created")
    else:
        r.check(render.named("Secret", secret_name or "") is not None, f"{tag} the chart's Secret {secret_name} exists")

    # -- Prometheus Operator ----------------------------------------------------------------------
    def switch_on(setting) -> bool:
        return render.apis if setting == "auto" else bool(setting)

    every_sm = render.of_kind("ServiceMonitor")
    # RabbitMQ's own ServiceMonitor selects a Service outside the chart, by its labels.
    rabbit = [m for m in every_sm if m["metadata"]["name"].endswith("-rabbitmq")]
    sms = [m for m in every_sm if m not in rabbit]
    rabbit_cfg = values["metrics"]["rabbitmq"]
    if switch_on(rabbit_cfg["enabled"]):
        problems = []
        if len(rabbit) != 1:
            problems.append(f"{len(rabbit)} RabbitMQ ServiceMonitors")
        else:
            spec = rabbit[0]["spec"]
            if spec["selector"].get("matchLabels") != rabbit_cfg["selector"]:
                problems.append(f"selects {spec['selector']}")
            paths = sorted(e.get("path") for e in spec["endpoints"])
            if paths != ["/metrics", "/metrics/detailed"]:
                problems.append(f"paths {paths}")
            detailed = [e for e in spec["endpoints"] if e.get("path") == "/metrics/detailed"]
            if detailed and "queue_coarse_metrics" not in detailed[0].get("params", {}).get("family", []):
                problems.append("the detailed endpoint does not ask for queue_coarse_metrics")
        r.check(not problems, f"{tag} a ServiceMonitor scrapes RabbitMQ's aggregated and per-queue metrics", "; ".join(problems))
    else:
        r.check(not rabbit, f"{tag} no RabbitMQ ServiceMonitor when metrics.rabbitmq is off")
    if switch_on(values["metrics"]["serviceMonitor"]["enabled"]):
        problems = []
        if len(sms) != 1:
            problems.append(f"{len(sms)} ServiceMonitors")
        else:
            spec = sms[0]["spec"]
            if not spec.get("endpoints") or any("port" not in e for e in spec["endpoints"]):
                problems.append("endpoints need a port")
            services = [s for s in render.of_kind("Service") if selects(spec.get("selector", {}).get("matchLabels"), s["metadata"]["labels"])]
            covered = {s["metadata"]["labels"].get("app.kubernetes.io/component") for s in services}
            if covered != set(components):
                problems.append(f"selects Services of {sorted(c for c in covered if c)}")
            for s in services:
                if not any(p.get("name") == e.get("port") for p in s["spec"]["ports"] for e in spec["endpoints"]):
                    problems.append(f"{s['metadata']['name']} has no port {spec['endpoints'][0].get('port')}")
                if not selects(s["spec"]["selector"], deployments[s["metadata"]["labels"]["app.kubernetes.io/component"]]["spec"]["template"]["metadata"]["labels"]):
                    problems.append(f"{s['metadata']['name']} selects no pods")
                if spec.get("jobLabel") and not str(s["metadata"]["labels"].get(spec["jobLabel"], "")).startswith("trawl"):
                    problems.append(f"{s['metadata']['name']}: job label does not match the alerts' job=~\"trawl.*\"")
        r.check(not problems, f"{tag} ServiceMonitor scrapes every component's metrics Service", "; ".join(problems))
    else:
        r.check(not sms, f"{tag} no ServiceMonitor without the Prometheus Operator")

    rules = render.of_kind("PrometheusRule")
    if alerts_file is None:
        r.skip(f"{tag} PrometheusRule", "deploy/prometheus/alerts.yml does not exist yet")
    elif switch_on(values["metrics"]["prometheusRule"]["enabled"]):
        problems = []
        if len(rules) != 1:
            problems.append(f"{len(rules)} PrometheusRules")
        else:
            groups = rules[0]["spec"].get("groups") or []
            for g in groups:
                if not g.get("name") or not g.get("rules"):
                    problems.append(f"group {g.get('name')} lacks name or rules")
                for rule in g.get("rules", []):
                    if not (rule.get("alert") or rule.get("record")) or not rule.get("expr"):
                        problems.append(f"rule {rule} lacks alert/record or expr")
            # Runbook links are repository-relative in the file; the chart prefixes the base URL.
            base = values["metrics"]["prometheusRule"].get("runbookBaseUrl") or ""
            prefix = base.rstrip("/") + "/" if base else ""
            relative = json.loads(json.dumps(groups))
            for g in relative:
                for rule in g.get("rules", []):
                    url = (rule.get("annotations") or {}).get("runbook_url")
                    if url is None:
                        continue
                    if not url.startswith(prefix + "deploy/prometheus/RUNBOOK.md#"):
                        problems.append(f"runbook_url {url} is not {prefix}deploy/prometheus/RUNBOOK.md#…")
                    rule["annotations"]["runbook_url"] = url.removeprefix(prefix)
            if relative != (yaml.safe_load(alerts_file.read_text()) or {}).get("groups"):
                problems.append("groups differ from deploy/prometheus/alerts.yml")
        r.check(not problems, f"{tag} PrometheusRule carries deploy/prometheus/alerts.yml", "; ".join(problems[:5]))
    else:
        r.check(not rules, f"{tag} no PrometheusRule without the Prometheus Operator")

    # -- Grafana dashboards -----------------------------------------------------------------------
    if not values["grafana"]["dashboards"]["enabled"]:
        r.skip(f"{tag} dashboard ConfigMaps", "grafana.dashboards.enabled is false")
    elif not dashboards:
        r.skip(f"{tag} dashboard ConfigMaps", "no deploy/grafana/dashboards/*.json yet")
    else:
        label, label_value = values["grafana"]["dashboards"]["label"], values["grafana"]["dashboards"]["labelValue"]
        boards = [c for c in render.of_kind("ConfigMap") if c["metadata"]["labels"].get(label) == label_value]
        by_key = {k: v for c in boards for k, v in (c.get("data") or {}).items()}
        problems = []
        if len(boards) != len(dashboards):
            problems.append(f"{len(boards)} ConfigMaps for {len(dashboards)} files")
        for f in dashboards:
            text = by_key.get(f.name)
            if text is None:
                problems.append(f"{f.name} missing")
            elif json.loads(text) != json.loads(f.read_text()):
                problems.append(f"{f.name} differs from the file")
        r.check(not problems, f"{tag} {len(dashboards)} dashboard ConfigMap(s) labelled {label}={label_value}, one per JSON file", "; ".join(problems))


def drain_hook_ok(main: dict, values: dict) -> bool:
    """preStop runs `trawl drain` against the metrics port over loopback: /drain answers a POST
    from loopback only, so a kubelet httpGet (from the node, a GET) could not reach it."""
    pre = (main.get("lifecycle") or {}).get("preStop") or {}
    want = ["/usr/local/bin/trawl", "drain", "--addr", f"127.0.0.1:{values['metrics']['port']}"]
    return pre.get("exec", {}).get("command") == want and "httpGet" not in pre


def check_api_pod(r: Report, tag: str, dep: dict, main: dict, env: dict, values: dict) -> None:
    """`trawl serve`: its port and settings from api.*, probes and /drain on the metrics port."""
    api = values["api"]
    pod = dep["spec"]["template"]["spec"]
    problems = []
    ports = {p.get("name"): p.get("containerPort") for p in main.get("ports", [])}
    if ports.get("http") != api["port"]:
        problems.append(f"port http is {ports.get('http')}, want {api['port']}")
    want = {
        "TRAWL__API__ADDR": f"0.0.0.0:{api['port']}",
        "TRAWL__API__RATE_PER_SEC": str(api["limits"]["ratePerSecond"]),
        "TRAWL__API__MAX_BODY_BYTES": str(api["limits"]["maxBodyBytes"]),
        "TRAWL__API__MAX_QUESTIONS": str(api["limits"]["maxQuestions"]),
        "TRAWL__API__IDEMPOTENCY_TTL_SECS": str(api["limits"]["idempotencyTtlSeconds"]),
        "TRAWL__API__QUESTIONS_PER_DAY": str(api["limits"]["questionsPerDay"]),
        "TRAWL__API__OPEN_BATCHES": str(api["limits"]["openBatches"]),
        "TRAWL__API__HEADER_TIMEOUT_SECS": str(api["limits"]["headerTimeoutSeconds"]),
        "TRAWL__API__IDLE_TIMEOUT_SECS": str(api["limits"]["idleTimeoutSeconds"]),
        "TRAWL__API__MAX_CONNECTIONS": str(api["limits"]["maxConnections"]),
        "TRAWL__API__MAX_CONNECTIONS_PER_CLIENT": str(api["limits"]["maxConnectionsPerClient"]),
    }
    for key, value in want.items():
        if env.get(key) != value:
            problems.append(f"{key}={env.get(key)!r}, want {value!r}")
    if not drain_hook_ok(main, values):
        problems.append(f"preStop {main.get('lifecycle')}: want `trawl drain` on the metrics port (the API port has no /drain)")
    if pod.get("terminationGracePeriodSeconds") != api["terminationGracePeriodSeconds"]:
        problems.append(f"terminationGracePeriodSeconds {pod.get('terminationGracePeriodSeconds')}")
    if api["autoscaling"]["enabled"] == ("replicas" in dep["spec"]):
        problems.append(f"replicas {dep['spec'].get('replicas')} with autoscaling {api['autoscaling']['enabled']}")
    r.check(not problems, f"{tag} api: `serve` on port {api['port']} with api.limits, preStop /drain on metrics", "; ".join(problems))


def check_api_objects(r: Report, tag: str, render: Render, dep: dict, values: dict) -> None:
    """The API's Service, its HPA when asked for, and its Ingress: /v1 and /openapi.json only."""
    api = values["api"]
    name = dep["metadata"]["name"]
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    service = render.named("Service", name)
    problems = []
    if service is None:
        problems.append(f"no Service {name}")
    else:
        spec = service["spec"]
        if spec.get("clusterIP") == "None" or spec.get("publishNotReadyAddresses"):
            problems.append("the clients' Service must balance over ready pods only")
        if spec.get("type", "ClusterIP") != api["service"]["type"]:
            problems.append(f"type {spec.get('type')}")
        if not selects(spec.get("selector"), pod_labels):
            problems.append("selects no API pod")
        if spec.get("ports") != [{"name": "http", "port": api["service"]["port"], "targetPort": "http", "protocol": "TCP"}]:
            problems.append(f"ports {spec.get('ports')}")
    r.check(not problems, f"{tag} api: Service {name} on port {api['service']['port']} -> http", "; ".join(problems))

    hpas = [h for h in render.of_kind("HorizontalPodAutoscaler") if h["spec"]["scaleTargetRef"]["name"] == name]
    if api["autoscaling"]["enabled"]:
        a = api["autoscaling"]
        ok = len(hpas) == 1 and hpas[0]["spec"].get("minReplicas") == a["minReplicas"] and hpas[0]["spec"].get("maxReplicas") == a["maxReplicas"]
        ok = ok and any(m.get("type") == "Resource" and m["resource"]["name"] == "cpu" for m in hpas[0]["spec"].get("metrics", []))
        r.check(ok, f"{tag} api: a CPU HorizontalPodAutoscaler, {a['minReplicas']}..{a['maxReplicas']}", f"{hpas}")
    else:
        r.check(not hpas, f"{tag} api: no HorizontalPodAutoscaler when api.autoscaling is off")

    ingresses = render.of_kind("Ingress")
    if not api["ingress"]["enabled"]:
        r.check(not ingresses, f"{tag} api: no Ingress unless api.ingress.enabled")
        return
    problems = []
    if len(ingresses) != 1:
        problems.append(f"{len(ingresses)} Ingresses")
    else:
        spec = ingresses[0]["spec"]
        routed = set()
        for rule in spec.get("rules", []):
            if (rule.get("host") or "") != api["ingress"]["host"]:
                problems.append(f"host {rule.get('host')!r}")
            for path in (rule.get("http") or {}).get("paths", []):
                backend = (path.get("backend") or {}).get("service") or {}
                if backend.get("name") != name or backend.get("port") != {"name": "http"}:
                    problems.append(f"{path.get('path')} goes to {backend}")
                routed.add((path.get("path"), path.get("pathType")))
        if routed != {("/v1", "Prefix"), ("/openapi.json", "Exact")}:
            problems.append(f"routes {sorted(routed)}: want /v1 (Prefix) and /openapi.json (Exact) only, never /drain or the probes")
        if spec.get("ingressClassName", "") != api["ingress"]["className"]:
            problems.append(f"ingressClassName {spec.get('ingressClassName')!r}")
        if spec.get("tls", []) != api["ingress"]["tls"]:
            problems.append(f"tls {spec.get('tls')}")
    r.check(not problems, f"{tag} api: Ingress routes /v1 and /openapi.json to the Service's http port, nothing else", "; ".join(problems))


def check_keda(r: Report, tag: str, render: Render, values: dict, scaled: list, hpas: list, deployments: dict, broker_ns: str) -> None:
    auths = {a["metadata"]["name"]: a for a in render.of_kind("TriggerAuthentication")}
    problems = []
    for name, auth in auths.items():
        refs = auth.get("spec", {}).get("secretTargetRef") or []
        if not refs or any(not all(k in ref for k in ("parameter", "name", "key")) for ref in refs):
            problems.append(f"TriggerAuthentication {name}: secretTargetRef needs parameter, name, key")
        host = [ref for ref in refs if ref.get("parameter") == "host"]
        if not host or host[0]["key"] != "TRAWL_RABBITMQ_MANAGEMENT_URL":
            problems.append(f"TriggerAuthentication {name}: host must come from TRAWL_RABBITMQ_MANAGEMENT_URL")
        secret = render.named("Secret", host[0]["name"]) if host else None
        if secret is not None and "TRAWL_RABBITMQ_MANAGEMENT_URL" not in (secret.get("data") or {}):
            problems.append(f"Secret {host[0]['name']} lacks TRAWL_RABBITMQ_MANAGEMENT_URL")
    r.check(len(auths) == 1 and not problems, f"{tag} TriggerAuthentication reads the management URL from the Secret", "; ".join(problems) or f"{len(auths)} TriggerAuthentications")

    by_target = {s["spec"].get("scaleTargetRef", {}).get("name"): s for s in scaled}
    for stage in STAGES:
        dep = deployments[stage]
        so = by_target.get(dep["metadata"]["name"])
        if not r.check(so is not None, f"{tag} {stage}: a ScaledObject targets its Deployment"):
            continue
        spec = so["spec"]
        a = values["stages"][stage]["autoscaling"]
        problems = []
        triggers = [t for t in spec.get("triggers", []) if t.get("type") == "rabbitmq"]
        if len(triggers) != 1:
            problems.append(f"{len(triggers)} rabbitmq triggers")
        else:
            meta = triggers[0].get("metadata", {})
            want_queue = f"{broker_ns}.{QUEUE_SUFFIX[stage]}"
            if meta.get("queueName") != want_queue:
                problems.append(f"queueName {meta.get('queueName')!r}, want {want_queue!r}")
            if meta.get("protocol") != "http":
                problems.append(f"protocol {meta.get('protocol')!r} (only http can leave unacknowledged messages out)")
            if meta.get("excludeUnacknowledged") != "true":
                problems.append(f"excludeUnacknowledged {meta.get('excludeUnacknowledged')!r}, want \"true\"")
            if meta.get("mode") != "QueueLength" or meta.get("value") != str(a["targetQueueLength"]):
                problems.append(f"mode {meta.get('mode')} value {meta.get('value')!r}")
            if meta.get("vhostName") != values["broker"]["vhost"]:
                problems.append(f"vhostName {meta.get('vhostName')!r}")
            if any(not isinstance(v, str) for v in meta.values()):
                problems.append("trigger metadata values must all be strings")
            if (triggers[0].get("authenticationRef") or {}).get("name") not in auths:
                problems.append("authenticationRef names no TriggerAuthentication")
        cpu = [t for t in spec.get("triggers", []) if t.get("type") == "cpu"]
        want_cpu = a.get("targetCPUUtilizationPercentage")
        if want_cpu is not None and (len(cpu) != 1 or cpu[0].get("metadata", {}).get("value") != str(want_cpu) or cpu[0].get("metadata", {}).get("containerName") != stage):
            problems.append(f"cpu triggers {cpu}, want one at {want_cpu} % on container {stage}")
        if spec.get("minReplicaCount") != a["minReplicas"] or spec.get("maxReplicaCount") != a["maxReplicas"]:
            problems.append(f"replicas {spec.get('minReplicaCount')}..{spec.get('maxReplicaCount')}")
        if "cooldownPeriod" not in spec:
            problems.append("no cooldownPeriod")
        behavior = ((spec.get("advanced") or {}).get("horizontalPodAutoscalerConfig") or {}).get("behavior") or {}
        if "stabilizationWindowSeconds" not in (behavior.get("scaleDown") or {}):
            problems.append("no scale-down stabilization")
        if "replicas" in dep["spec"]:
            problems.append("Deployment sets replicas under an autoscaler")
        r.check(not problems, f"{tag} {stage}: rabbitmq trigger on {broker_ns}.{QUEUE_SUFFIX[stage]}, protocol http, unacked counted; CPU trigger beside it", "; ".join(problems))
    stage_names = {deployments[s]["metadata"]["name"] for s in STAGES}
    stage_hpas = [h for h in hpas if h["spec"]["scaleTargetRef"]["name"] in stage_names]
    r.check(len(scaled) == len(STAGES) and not stage_hpas, f"{tag} KEDA: {len(STAGES)} ScaledObjects and no HPA on a stage", f"{len(scaled)} ScaledObjects, {len(stage_hpas)} stage HPAs")


def check_network(r: Report, tag: str, render: Render, deployments: dict, values: dict) -> None:
    if not values["networkPolicy"]["enabled"]:
        r.skip(f"{tag} NetworkPolicies", "networkPolicy.enabled is false")
        return
    policies = render.of_kind("NetworkPolicy")
    for component, dep in sorted(deployments.items()):
        labels = dep["spec"]["template"]["metadata"]["labels"]
        mine = [p for p in policies if selects(p["spec"]["podSelector"].get("matchLabels"), labels)]
        problems = []
        if len(mine) != 1:
            r.check(False, f"{tag} {component}: one NetworkPolicy", f"{len(mine)} select its pods")
            continue
        spec = mine[0]["spec"]
        if sorted(spec.get("policyTypes", [])) != ["Egress", "Ingress"]:
            problems.append(f"policyTypes {spec.get('policyTypes')}")
        # The API's pods also take its calls, on port `http` (from api.networkPolicy.from).
        allowed = ("metrics", 9464) + (("http", values["api"]["port"]) if component == "api" else ())
        for rule in spec.get("ingress", []):
            ports = rule.get("ports") or []
            if not ports or any(p.get("port") not in allowed for p in ports):
                problems.append(f"ingress beyond the metrics port: {ports or 'all ports'}")
        if component == "api":
            http = [rule for rule in spec.get("ingress", []) if any(p.get("port") == "http" for p in rule.get("ports") or [])]
            want_from = values["api"]["networkPolicy"].get("from") or None
            if len(http) != 1 or http[0].get("from") != want_from:
                problems.append(f"port http is open to {[rule.get('from', 'anyone') for rule in http]}, want {want_from or 'anyone'}")
        if component in ("api", "monitor"):
            # They talk to the broker, Redis and the object store only: the internet on HTTPS,
            # and only while output.url is a bucket that networkPolicy.objectStore.internet opens.
            bucket_https = output_scheme(values) != "file" and values["networkPolicy"]["objectStore"]["internet"]
            for rule in spec.get("egress", []):
                if cidrs_of(rule, "0.0.0.0/0")[0] or cidrs_of(rule, "::/0")[0]:
                    if not bucket_https or rule.get("ports") != [{"port": 443, "protocol": "TCP"}]:
                        problems.append(f"reaches the internet on {rule.get('ports') or 'every port'}; only HTTPS to a bucket is allowed")
        for rule in spec.get("egress", []):
            if not rule.get("to"):
                problems.append("an egress rule without `to` allows everything")
        dns = [rule for rule in spec.get("egress", []) if any(p.get("port") == 53 for p in rule.get("ports", []))]
        if not dns:
            problems.append("no DNS egress")
        if component in ("fetch", "fetch-browser"):
            rules = spec.get("egress", [])
            v4 = [cidrs_of(rule, "0.0.0.0/0") for rule in rules]
            v6 = [cidrs_of(rule, "::/0") for rule in rules]
            v4 = [exc for found, exc in v4 if found]
            v6 = [exc for found, exc in v6 if found]
            if not v4:
                problems.append("no 0.0.0.0/0 egress")
            for exc in v4:
                missing = [c for c in FETCH_BLOCKED_V4 if c not in exc]
                if missing:
                    problems.append(f"0.0.0.0/0 does not except {missing}")
            for exc in v6:
                missing = [c for c in FETCH_BLOCKED_V6 if c not in exc]
                if missing:
                    problems.append(f"::/0 does not except {missing}")
            # Nothing else may open a blocked range again (an ipBlock inside it, say).
            for rule in rules:
                for peer in rule.get("to", []):
                    cidr = (peer.get("ipBlock") or {}).get("cidr")
                    if cidr and cidr not in ("0.0.0.0/0", "::/0") and any(overlaps(cidr, b) for b in FETCH_BLOCKED_V4 + FETCH_BLOCKED_V6):
                        problems.append(f"extra ipBlock {cidr} reopens a blocked range")
            what = f"{tag} {component}: NetworkPolicy allows the internet but not 10/8, 172.16/12, 192.168/16, 169.254/16 (metadata), 127/8, fc00::/7"
        elif component == "api":
            what = f"{tag} api: NetworkPolicy admits the API's callers on port http, Prometheus on metrics, the internet on HTTPS at most"
        elif component == "monitor":
            what = f"{tag} monitor: NetworkPolicy limits ingress to the metrics port, egress to named peers and HTTPS at most"
        else:
            what = f"{tag} {component}: NetworkPolicy limits ingress to the metrics port, egress to named peers"
        r.check(not problems, what, "; ".join(problems))


def output_url(values: dict) -> str:
    o = values["output"]
    return o["url"] or f"file://{o['mountPath'].rstrip('/')}"


def output_scheme(values: dict) -> str:
    return output_url(values).split("://", 1)[0].lower()


def check_output(r: Report, tag: str, render: Render, deployments: dict, configmaps: dict, values: dict) -> None:
    """One object store for the whole release, its settings and keys in every pod, and a way to it."""
    o, s3 = values["output"], values["output"]["s3"]
    url, scheme = output_url(values), output_scheme(values)
    mains = {}
    for component, dep in sorted(deployments.items()):
        mains[component] = next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == component)

    # Shared: a bucket, or a claim mounted in every pod; never a pod's own emptyDir.
    problems = []
    if scheme not in ("s3", "gs", "az") and not (scheme == "file" and o["existingClaim"]):
        problems.append(f"{url} is no shared store")
    if re.match(r"^[a-z0-9]+://[^/]*@", url):
        problems.append("the URL carries credentials")
    for component, main in mains.items():
        pod = deployments[component]["spec"]["template"]["spec"]
        env = container_env(main, configmaps)
        if env.get("TRAWL__OUTPUT__URL") != url:
            problems.append(f"{component}: TRAWL__OUTPUT__URL={env.get('TRAWL__OUTPUT__URL')!r}")
        volume = next((v for v in pod.get("volumes", []) if v["name"] == "output"), None)
        mount = next((m["mountPath"] for m in main.get("volumeMounts", []) if m["name"] == "output"), None)
        if scheme == "file":
            claim = ((volume or {}).get("persistentVolumeClaim") or {}).get("claimName")
            if claim != o["existingClaim"] or mount != o["mountPath"]:
                problems.append(f"{component}: output volume {volume} at {mount}, want claim {o['existingClaim']!r} at {o['mountPath']}")
        elif volume or mount:
            problems.append(f"{component}: mounts an output volume though results go to a bucket")
    where = f" on claim {o['existingClaim']}" if scheme == "file" else ""
    r.check(not problems, f"{tag} every pod shares one object store: {url}{where}", "; ".join(problems))

    # The S3 settings, from the ConfigMap every pod reads.
    if scheme == "s3":
        want = {
            "TRAWL__OUTPUT__ENDPOINT": s3["endpoint"] or None,
            "TRAWL__OUTPUT__REGION": s3["region"] or None,
            "TRAWL__OUTPUT__PATH_STYLE": str(s3["pathStyle"]).lower() if s3["pathStyle"] is not None else ("true" if s3["endpoint"] else None),
            "TRAWL__OUTPUT__ALLOW_HTTP": "true" if s3["allowHttp"] else None,
        }
        problems = []
        if s3["endpoint"].startswith("http://") and want["TRAWL__OUTPUT__ALLOW_HTTP"] != "true":
            problems.append("an http:// endpoint without allow-http")
        for component, main in mains.items():
            env = container_env(main, configmaps)
            for key, value in want.items():
                if env.get(key) != value:
                    problems.append(f"{component}: {key}={env.get(key)!r}, want {value!r}")
        shown = ", ".join(f"{k.removeprefix('TRAWL__OUTPUT__').lower()} {v}" for k, v in want.items() if v)
        r.check(not problems, f"{tag} S3 settings reach every pod ({shown or 'AWS defaults'})", "; ".join(problems))

    # Keys: by secretKeyRef from output.s3.existingSecret into each trawl container, never a literal,
    # never into the browser sidecar (it runs untrusted pages).
    secret = s3["existingSecret"] if scheme == "s3" else ""
    want = {}
    if secret:
        want = {"AWS_ACCESS_KEY_ID": s3["accessKeyIdKey"], "AWS_SECRET_ACCESS_KEY": s3["secretAccessKeyKey"]}
        if s3.get("sessionTokenKey"):
            want["AWS_SESSION_TOKEN"] = s3["sessionTokenKey"]
    problems = []
    for component, dep in sorted(deployments.items()):
        pod = dep["spec"]["template"]["spec"]
        for c in pod["containers"] + pod.get("initContainers", []):
            for item in c.get("env", []):
                if item["name"].startswith("AWS_") and "value" in item:
                    problems.append(f"{component}/{c['name']}: {item['name']} written into the pod spec")
                if item["name"].startswith("AWS_") and c is not mains[component]:
                    problems.append(f"{component}/{c['name']}: the store's {item['name']} reaches a sidecar")
        refs = {
            item["name"]: (item.get("valueFrom") or {}).get("secretKeyRef")
            for item in mains[component].get("env", [])
            if item["name"].startswith("AWS_")
        }
        got = {k: v for k, v in refs.items() if v}
        expected = {k: {"name": secret, "key": key} for k, key in want.items()}
        if got != expected:
            problems.append(f"{component}: {got or 'no keys'}, want {expected or 'none'}")
    if secret:
        what = f"{tag} S3 keys reach every trawl container from Secret {secret} by secretKeyRef ({', '.join(want)}), never inlined, never the browser"
    else:
        what = f"{tag} no S3 keys in any pod spec: the pod's identity (or the connections Secret) supplies them"
    r.check(not problems, what, "; ".join(problems))

    # An IRSA role lands on the ServiceAccount every pod runs as.
    role = (values["serviceAccount"].get("annotations") or {}).get(IRSA)
    if role:
        sas = [a for a in render.of_kind("ServiceAccount") if (a["metadata"].get("annotations") or {}).get(IRSA) == role]
        names = {a["metadata"]["name"] for a in sas}
        problems = [] if len(sas) == 1 else [f"{len(sas)} ServiceAccounts carry the role"]
        for component, dep in sorted(deployments.items()):
            if dep["spec"]["template"]["spec"].get("serviceAccountName") not in names:
                problems.append(f"{component} runs as {dep['spec']['template']['spec'].get('serviceAccountName')!r}")
        r.check(not problems, f"{tag} IRSA: {role} on ServiceAccount {', '.join(sorted(names)) or '?'}, which every pod runs as", "; ".join(problems))

    # A way to the bucket from every pod: HTTPS to the internet, or the operator's rules.
    if values["networkPolicy"]["enabled"] and scheme != "file":
        reach = values["networkPolicy"]["objectStore"]
        policies = render.of_kind("NetworkPolicy")
        problems = []
        for component, dep in sorted(deployments.items()):
            labels = dep["spec"]["template"]["metadata"]["labels"]
            mine = [p for p in policies if selects(p["spec"]["podSelector"].get("matchLabels"), labels)]
            egress = mine[0]["spec"].get("egress", []) if len(mine) == 1 else []
            if reach["internet"]:
                https = [
                    rule for rule in egress
                    if cidrs_of(rule, "0.0.0.0/0")[0]
                    and (not rule.get("ports") or {"port": 443, "protocol": "TCP"} in rule["ports"])
                ]
                if not https:
                    problems.append(f"{component}: no HTTPS to the internet")
            for rule in reach.get("extraEgress") or []:
                if rule not in egress:
                    problems.append(f"{component}: lacks {rule}")
            if not reach["internet"] and not reach.get("extraEgress"):
                problems.append("networkPolicy.objectStore opens nothing: no pod reaches the bucket")
        how = " and ".join(x for x in ("HTTPS to the internet" if reach["internet"] else "", "objectStore.extraEgress" if reach.get("extraEgress") else "") if x)
        r.check(not problems, f"{tag} every pod's NetworkPolicy reaches the object store ({how or 'nothing'})", "; ".join(problems))

    # Results notifications: the three settings when asked for, none otherwise.
    rq = values["broker"]["resultsQueue"]
    config = next((c for c in configmaps.values() if "TRAWL__OUTPUT__URL" in (c.get("data") or {})), {})
    got = {k: v for k, v in (config.get("data") or {}).items() if k.startswith("TRAWL__BROKER__RESULTS_")}
    want = {}
    if rq["enabled"]:
        want = {
            "TRAWL__BROKER__RESULTS_QUEUE": "true",
            "TRAWL__BROKER__RESULTS_MAX_LENGTH": str(rq["maxLength"]),
            "TRAWL__BROKER__RESULTS_TTL_SECS": str(rq["ttlSeconds"]),
        }
    r.check(got == want, f"{tag} results notifications " + (f"on: at most {rq['maxLength']}, {rq['ttlSeconds']} s each" if rq["enabled"] else "off: no TRAWL__BROKER__RESULTS_* set"), f"{got}")


def check_single_pod(r: Report, render: Render) -> None:
    """file:// on an emptyDir is allowed for exactly this: one pod, nothing scaled."""
    tag = f"[{render.name}]"
    if not r.check(render.ok, f"{tag} a release of one pod may keep results on its emptyDir: renders", render.error):
        return
    deps = render.of_kind("Deployment")
    scalers = render.of_kind("HorizontalPodAutoscaler") + render.of_kind("ScaledObject")
    problems = [] if len(deps) == 1 and deps[0]["spec"].get("replicas") == 1 and not scalers else [f"{len(deps)} Deployments, {len(scalers)} autoscalers"]
    for dep in deps:
        pod = dep["spec"]["template"]["spec"]
        volume = next((v for v in pod.get("volumes", []) if v["name"] == "output"), {})
        if "emptyDir" not in volume:
            problems.append(f"output volume {volume}")
    configs = [c for c in render.of_kind("ConfigMap") if "TRAWL__OUTPUT__URL" in (c.get("data") or {})]
    if [c["data"]["TRAWL__OUTPUT__URL"] for c in configs] != ["file:///var/lib/trawl"]:
        problems.append(f"TRAWL__OUTPUT__URL {[c['data']['TRAWL__OUTPUT__URL'] for c in configs]}")
    r.check(not problems, f"{tag} one Deployment of one replica, no autoscaler, output on its emptyDir", "; ".join(problems))


def overlaps(a: str, b: str) -> bool:
    import ipaddress

    na, nb = ipaddress.ip_network(a, strict=False), ipaddress.ip_network(b, strict=False)
    return na.version == nb.version and na.overlaps(nb)


# ------------------------------------------------------------------------------------------------
# Lint, the values schema and the chart's own guards


def lint(helm: str, chart: Path, kube_version: str) -> list:
    """The values files only: the defaults alone lack output.url and must not render."""

    def one(values_file: Path):
        return values_file, run([helm, "lint", "--strict", str(chart), "--kube-version", kube_version, "-f", str(values_file)])

    with ThreadPoolExecutor(max_workers=len(CI_FILES)) as pool:
        return list(pool.map(one, [chart / "ci" / f for f in CI_FILES]))


def check_lint(r: Report, results: list) -> None:
    for values_file, proc in results:
        r.check(proc.returncode == 0, f"helm lint --strict with ci/{values_file.name}", helm_stderr(proc.stdout + proc.stderr))


REJECTED = [
    ("stages.fetch.replicas: \"many\" (schema: not an integer)", {"stages": {"fetch": {"replicas": "many"}}}, "replicas"),
    ("stages.fetch.replica (schema: unknown key in a stage)", {"stages": {"fetch": {"replica": 3}}}, "replica"),
    ("stages.crawl (schema: no such stage)", {"stages": {"crawl": {"enabled": True}}}, "crawl"),
    ("autoscaling.engine: kedah (schema: not an engine)", {"autoscaling": {"engine": "kedah"}}, "engine"),
    ("browser.sessions: 0 (schema: minimum 1)", {"browser": {"sessions": 0}}, "sessions"),
    ("a credential URL in config (chart guard)", {"config": {"TRAWL__LLM__BASE_URL": "https://u:secretpw@llm.example/v1"}}, "password"),
    ("TRAWL__BROKER__URL in config (chart guard)", {"config": {"TRAWL__BROKER__URL": "amqp://rabbitmq/"}}, "Secret"),
    ("config overriding a computed key (chart guard)", {"config": {"TRAWL__METRICS__ADDR": "0.0.0.0:1"}}, "set by the chart"),
    ("secrets.* beside existingSecret (chart guard)", {"secrets": {"brokerUrl": "amqp://a:b@c/"}}, "existingSecret"),
    ("api.port equal to metrics.port (chart guard)", {"api": {"port": 9464}}, "must differ"),
    ("TRAWL__API__RATE_PER_SEC in config (chart guard)", {"config": {"TRAWL__API__RATE_PER_SEC": 5}}, "api.limits"),
    ("api.limits.ratePerSecond: 0 (schema: minimum 1)", {"api": {"limits": {"ratePerSecond": 0}}}, "ratePerSecond"),
    ("api.ingress.hosts (schema: unknown key; it is `host`)", {"api": {"ingress": {"hosts": ["trawl.example.com"]}}}, "hosts"),
    ("TRAWL__BROKER__MAX_IN_FLIGHT_BYTES in config (chart guard)", {"config": {"TRAWL__BROKER__MAX_IN_FLIGHT_BYTES": 1}}, "stages.<name>.maxInFlightBytes"),
    ("a byte cap below a megabyte (schema)", {"stages": {"clean": {"maxInFlightBytes": 1000}}}, "maxInFlightBytes"),
    # -- results the pods would not share -------------------------------------------------------
    ("the defaults alone: output.url unset (chart guard)", {"output": {"url": ""}}, ["output.url is not set", "set output.url to s3://BUCKET/PREFIX", "existingClaim"]),
    (
        "file:// on an emptyDir with the default fleet, autoscaled (chart guard)",
        {"output": {"url": "file:///var/lib/trawl"}},
        ["emptyDir", "autoscaling is on for stages.search", "set output.url"],
    ),
    (
        "file:// on an emptyDir, nothing autoscaled, one replica per stage: still 7 pods (chart guard)",
        {
            "output": {"url": "file:///var/lib/trawl"},
            "autoscaling": {"engine": "none"},
            "stages": {s: {"replicas": 1} for s in STAGES},
            "api": {"replicas": 1},
        },
        ["emptyDir", "7 pods", "set output.url"],
    ),
    (
        "file:// on an emptyDir, one stage and the monitor: 2 pods (chart guard)",
        {
            "output": {"url": "file:///var/lib/trawl"},
            "autoscaling": {"engine": "none"},
            "stages": {s: {"enabled": s == "clean", "replicas": 1} for s in STAGES},
            "api": {"enabled": False},
        },
        ["emptyDir", "2 pods", "set output.url"],
    ),
    (
        "file:// on an emptyDir, a single pod that KEDA scales (chart guard)",
        {
            "output": {"url": "file:///var/lib/trawl"},
            "autoscaling": {"engine": "keda"},
            "stages": {s: {"enabled": s == "fetch"} for s in STAGES},
            "monitor": {"enabled": False},
            "api": {"enabled": False},
        },
        ["emptyDir", "stages.fetch", "set output.url"],
    ),
    (
        "file:// on an emptyDir, only the API, on its HPA (chart guard)",
        {
            "output": {"url": "file:///var/lib/trawl"},
            "stages": {s: {"enabled": False} for s in STAGES},
            "monitor": {"enabled": False},
            "api": {"autoscaling": {"enabled": True}},
        },
        ["emptyDir", "autoscaling is on for api", "set output.url"],
    ),
    ("output.url memory:// (chart guard)", {"output": {"url": "memory://"}}, "never shared"),
    ("output.url without a bucket (chart guard)", {"output": {"url": "s3:///trawl"}}, "names no bucket"),
    ("keys in output.url (chart guard)", {"output": {"url": "s3://AKIAEXAMPLE:wJalrEXAMPLE@trawl-results/trawl"}}, "must not carry credentials"),
    ("an http:// endpoint without allowHttp (chart guard)", {"output": {"s3": {"endpoint": "http://versitygw:7070"}}}, "allowHttp"),
    ("keys in output.s3.endpoint (schema)", {"output": {"s3": {"endpoint": "https://AKIA:secret@s3.example.com"}}}, "endpoint"),
    ("output.s3.endpoint without a scheme (schema)", {"output": {"s3": {"endpoint": "s3.example.com"}}}, "endpoint"),
    ("output.s3.pathStyle: \"yes\" (schema)", {"output": {"s3": {"pathStyle": "yes"}}}, "pathStyle"),
    ("output.s3.* with a gs:// URL (chart guard)", {"output": {"url": "gs://trawl-results/trawl", "s3": {"region": "eu-west-1"}}}, "output.s3.* apply to s3://"),
    ("output.existingClaim with a bucket (chart guard)", {"output": {"existingClaim": "trawl-results"}}, "existingClaim"),
    ("a file:// URL other than output.mountPath (chart guard)", {"output": {"url": "file:///data", "existingClaim": "trawl-results"}}, "mountPath"),
    (
        "S3 keys and an IRSA role together (chart guard)",
        {"output": {"s3": {"existingSecret": "trawl-s3"}}, "serviceAccount": {"annotations": {IRSA: "arn:aws:iam::123456789012:role/trawl"}}},
        "both set",
    ),
    (
        "an IRSA role with serviceAccount.create false (chart guard)",
        {"serviceAccount": {"create": False, "annotations": {IRSA: "arn:aws:iam::123456789012:role/trawl"}}},
        "serviceAccount.create",
    ),
    ("AWS_SECRET_ACCESS_KEY in config (chart guard)", {"config": {"AWS_SECRET_ACCESS_KEY": "wJalrEXAMPLE"}}, "output.s3.existingSecret"),
    ("AWS_ACCESS_KEY_ID in a stage's env (chart guard)", {"stages": {"fetch": {"env": {"AWS_ACCESS_KEY_ID": "AKIAEXAMPLE"}}}}, "output.s3.existingSecret"),
    ("AWS_ENDPOINT_URL in config (chart guard)", {"config": {"AWS_ENDPOINT_URL": "http://versitygw:7070"}}, "output.s3"),
    ("AZURE_STORAGE_ACCOUNT_KEY in config (chart guard)", {"config": {"AZURE_STORAGE_ACCOUNT_KEY": "c2VjcmV0"}}, "looks like a credential"),
    ("TRAWL__OUTPUT__ENDPOINT in a stage's env (chart guard)", {"stages": {"clean": {"env": {"TRAWL__OUTPUT__ENDPOINT": "http://x:1"}}}}, "output.s3"),
    ("TRAWL__BROKER__RESULTS_QUEUE in config (chart guard)", {"config": {"TRAWL__BROKER__RESULTS_QUEUE": True}}, "broker.resultsQueue"),
]
# Under every case above: the one value the defaults lack, so each fails for its own reason.
REJECTED_BASE = {"output": {"url": "s3://trawl-results/trawl"}}


def check_schema_document(r: Report, chart: Path) -> None:
    schema = json.loads((chart / "values.schema.json").read_text())
    try:
        import jsonschema
    except ImportError:
        r.skip("values.schema.json is a valid draft-07 schema", "jsonschema is not installed (run through scripts/check-chart)")
        return
    try:
        jsonschema.Draft7Validator.check_schema(schema)
        ok, detail = schema.get("$schema", "").startswith("http://json-schema.org/draft-07/"), f"$schema is {schema.get('$schema')!r}"
    except jsonschema.SchemaError as e:
        ok, detail = False, e.message
    r.check(ok, "values.schema.json is a valid draft-07 schema", detail)
    stage = schema.get("definitions", {}).get("stage", {})
    r.check(
        stage.get("additionalProperties") is False and schema.get("properties", {}).get("stages", {}).get("additionalProperties") is False,
        "values.schema.json refuses unknown stages and unknown keys in a stage",
    )


def check_rejections(r: Report, helm: str, chart: Path, kube_version: str) -> None:
    tmp = tempfile.mkdtemp(prefix="trawl-bad-values-")
    try:
        jobs = []
        for i, (what, bad, needles) in enumerate(REJECTED):
            f = Path(tmp) / f"bad-{i}.yaml"
            f.write_text(yaml.safe_dump(deep_merge(REJECTED_BASE, bad)))
            needles = [needles] if isinstance(needles, str) else needles
            jobs.append((what, needles, [helm, "template", RELEASE, str(chart), "--kube-version", kube_version, "-f", str(f)]))
        with ThreadPoolExecutor(max_workers=HELM_JOBS) as pool:
            procs = list(pool.map(lambda j: run(j[2]), jobs))
        for (what, needles, _), proc in zip(jobs, procs):
            err = helm_stderr(proc.stderr)
            missing = [n for n in needles if n.lower() not in err.lower()]
            r.check(
                proc.returncode != 0 and not missing,
                f"rejects {what}",
                f"exit {proc.returncode}; missing {missing}; stderr: {err[:400]!r}",
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parents[2]
    parser.add_argument("--chart", type=Path, default=root / "helm" / "trawl")
    parser.add_argument("--helm", default=os.environ.get("HELM", "helm"))
    parser.add_argument("--kube-version", default="1.33.0")
    args = parser.parse_args()
    chart: Path = args.chart.absolute()
    r = Report()

    # The two symlinks that make deploy/ the single source of the rules and dashboards.
    for link, target in (("dashboards", "../../deploy/grafana/dashboards"), ("files/alerts.yml", "../../../deploy/prometheus/alerts.yml")):
        p = chart / link
        r.check(p.is_symlink(), f"{link} is a symlink into deploy/", f"{p} is not a symlink")
        if p.is_symlink() and chart == root / "helm" / "trawl":
            r.check(os.readlink(p) == target, f"{link} -> {target}", f"points to {os.readlink(p)}")
    alerts = chart / "files" / "alerts.yml"
    alerts_file = alerts if alerts.exists() else None
    overrides = {}
    if alerts_file is None:
        r.note("deploy/prometheus/alerts.yml is absent: the PrometheusRule checks are skipped")
        # ci/scaled-values.yaml insists on the rules, which cannot render without the file.
        overrides["metrics.prometheusRule.enabled"] = False
    dashboards = sorted(Path(p) for p in glob.glob(str(chart / "dashboards" / "*.json")))
    if not dashboards:
        r.note("deploy/grafana/dashboards/*.json is absent: the dashboard checks are skipped")

    render_chart, tmp = stage_chart(chart, r)
    try:
        chart_values = yaml.safe_load((render_chart / "values.yaml").read_text())
        # Helm runs are the slow part: render and lint side by side, report in a fixed order.
        with ThreadPoolExecutor(max_workers=2) as pool:
            renders_f = pool.submit(render_all, args.helm, render_chart, args.kube_version, overrides)
            lint_f = pool.submit(lint, args.helm, render_chart, args.kube_version)
            renders, lints = renders_f.result(), lint_f.result()
        check_lint(r, lints)
        for render in renders:
            if render.name == "single-pod":
                check_single_pod(r, render)
            else:
                check_render(r, render, chart_values, alerts_file, dashboards, args.kube_version)
        check_schema_document(r, render_chart)
        check_rejections(r, args.helm, render_chart, args.kube_version)
    finally:
        if tmp:
            tmp.cleanup()

    print(f"check-chart: {r.passed} passed, {r.failed} failed, {r.skipped} skipped")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
