#!/usr/bin/env python3
"""Offline checks of deploy/compose.yaml's object store (run through scripts/check-deploy).

No Docker engine is needed: the file is read as Compose would read it (YAML merge keys, `${VAR}`
substitution, with the defaults and again with the variables set) and checked for what
`docker compose up` relies on: every trawl container writes results to one S3 bucket on the
Compose network (URL, endpoint, region, path-style, plain HTTP allowed), with the keys the S3
server was started with; the server is pinned, persistent and health-checked; a one-shot step
creates the bucket after the server is healthy and before any trawl container starts; nothing
still mounts the old per-machine output volume; every variable compose.yaml substitutes is
described in compose.env.example; and published ports listen on TRAWL_BIND_ADDRESS only.

Prints one line per check (PASS or FAIL) and a closing `N passed, N failed`; exits 1 when any
check failed. The Compose specification itself is checked by check-jsonschema (scripts/check-deploy).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

import yaml

# Compose's substitution: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?err}, $VAR; $$ is a $.
SUBST = re.compile(r"\$(?:\$|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
# Set by the shell, not by the operator: not expected in compose.env.example.
SHELL_VARIABLES = {"PWD"}
TRAWL_IMAGE = "trawl:local"


class Report:
    def __init__(self) -> None:
        self.passed = self.failed = 0

    def check(self, ok: bool, what: str, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            print(f"PASS {what}")
        else:
            self.failed += 1
            print(f"FAIL {what}" + (f": {detail[:600]}" if detail else ""))
        return ok


def interpolate(node, env: dict[str, str]):
    """The node with every string substituted as Compose does."""
    if isinstance(node, dict):
        return {k: interpolate(v, env) for k, v in node.items()}
    if isinstance(node, list):
        return [interpolate(v, env) for v in node]
    if not isinstance(node, str):
        return node

    def one(m: re.Match) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1) or m.group(4)
        op, arg = m.group(2), m.group(3) or ""
        value = env.get(name)
        if op == ":-":
            return value if value else interpolate(arg, env)
        if op == "-":
            return value if value is not None else interpolate(arg, env)
        return value or ""

    return SUBST.sub(one, node)


def env_of(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def depends(service: dict) -> dict[str, str]:
    dep = service.get("depends_on") or {}
    if isinstance(dep, list):
        return {name: "service_started" for name in dep}
    return {name: (spec or {}).get("condition", "service_started") for name, spec in dep.items()}


def pinned(image: str) -> bool:
    """A tag that names a release (or a digest): never a moving one."""
    if "@sha256:" in image:
        return True
    tag = image.rsplit(":", 1)[1] if ":" in image.rsplit("/", 1)[-1] else ""
    return bool(tag) and tag not in ("latest", "stable", "edge", "main", "master")


def check(r: Report, raw: dict, env: dict[str, str], label: str) -> None:
    doc = interpolate(raw, env)
    services = doc.get("services") or {}
    trawl = {name: s for name, s in services.items() if s.get("image") == TRAWL_IMAGE}
    r.check(len(trawl) >= 7, f"[{label}] trawl services found: {', '.join(sorted(trawl))}")

    # -- every trawl container: one bucket, the same settings --------------------------------------
    urls = {name: env_of(s).get("TRAWL__OUTPUT__URL", "") for name, s in trawl.items()}
    distinct = set(urls.values())
    url = next(iter(distinct)) if len(distinct) == 1 else ""
    parts = urlsplit(url)
    ok = len(distinct) == 1 and parts.scheme == "s3" and bool(parts.netloc) and "@" not in parts.netloc
    if not r.check(ok, f"[{label}] every trawl container writes results to one bucket: {url or urls}", f"{urls}"):
        return
    bucket = parts.netloc

    settings = {name: {k: v for k, v in env_of(s).items() if k.startswith("TRAWL__OUTPUT__") or k.startswith("AWS_")} for name, s in trawl.items()}
    first = next(iter(settings.values()))
    problems = [f"{name} differs: {s}" for name, s in settings.items() if s != first]
    endpoint = first.get("TRAWL__OUTPUT__ENDPOINT", "")
    ep = urlsplit(endpoint)
    if ep.scheme not in ("http", "https") or not ep.hostname or "@" in ep.netloc:
        problems.append(f"endpoint {endpoint!r}")
    if first.get("TRAWL__OUTPUT__PATH_STYLE") != "true":
        problems.append(f"TRAWL__OUTPUT__PATH_STYLE={first.get('TRAWL__OUTPUT__PATH_STYLE')!r}: an S3 server on the Compose network has no per-bucket host names")
    if ep.scheme == "http" and first.get("TRAWL__OUTPUT__ALLOW_HTTP") != "true":
        problems.append("an http:// endpoint without TRAWL__OUTPUT__ALLOW_HTTP=true")
    if not first.get("TRAWL__OUTPUT__REGION"):
        problems.append("no TRAWL__OUTPUT__REGION")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        if not first.get(key):
            problems.append(f"no {key}")
    r.check(not problems, f"[{label}] every trawl container has the same endpoint {endpoint}, region, path-style, plain HTTP allowed and keys", "; ".join(problems))

    # -- the S3 server -------------------------------------------------------------------------
    server_name = ep.hostname or ""
    server = services.get(server_name)
    if not r.check(server is not None, f"[{label}] the endpoint's host {server_name!r} is a service of the stack"):
        return
    problems = []
    if not pinned(server.get("image", "")):
        problems.append(f"image {server.get('image')!r} is not pinned")
    port = str(ep.port or (443 if ep.scheme == "https" else 80))
    if port not in json.dumps(server.get("command", "")) + json.dumps(server.get("healthcheck", {})):
        problems.append(f"nothing shows it listens on {port}")
    if not (server.get("healthcheck") or {}).get("test"):
        problems.append("no healthcheck (the bucket step waits for it)")
    named = set((doc.get("volumes") or {}).keys())
    mounts = [v.split(":", 1)[0] if isinstance(v, str) else v.get("source") for v in server.get("volumes", [])]
    if not any(m in named for m in mounts):
        problems.append("no named volume: objects would go with the container")
    server_values = set(env_of(server).values()) | set(map(str, server.get("command") or []))
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        if first.get(key) not in server_values:
            problems.append(f"the trawl containers' {key} is not what the server starts with")
    r.check(not problems, f"[{label}] {server_name}: pinned {server.get('image')}, health-checked, data on a named volume, started with the trawl containers' keys", "; ".join(problems))

    # -- the one-shot bucket step ----------------------------------------------------------------
    steps = {
        name: s for name, s in services.items()
        if s is not server and name not in trawl and bucket in json.dumps(s.get("command", "")) and "create-bucket" in json.dumps(s.get("command", ""))
    }
    if not r.check(len(steps) == 1, f"[{label}] one one-shot step creates bucket {bucket!r}", f"found {sorted(steps)}"):
        return
    step_name, step = next(iter(steps.items()))
    problems = []
    if str(step.get("restart", "no")) != "no":
        problems.append(f"restart {step.get('restart')!r}: a one-shot must not restart")
    if not pinned(step.get("image", "")):
        problems.append(f"image {step.get('image')!r} is not pinned")
    if depends(step).get(server_name) != "service_healthy":
        problems.append(f"does not wait for {server_name} to be healthy")
    step_env = env_of(step)
    if step_env.get("AWS_ENDPOINT_URL") != endpoint:
        problems.append(f"AWS_ENDPOINT_URL {step_env.get('AWS_ENDPOINT_URL')!r}, want {endpoint!r}")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        if step_env.get(key) != first.get(key):
            problems.append(f"{key} differs from the trawl containers'")
    if "head-bucket" not in json.dumps(step.get("command", "")):
        problems.append("not idempotent: a second `up` would fail on the existing bucket")
    r.check(not problems, f"[{label}] {step_name}: creates {bucket} once {server_name} is healthy, with the same keys, idempotently", "; ".join(problems))

    problems = []
    for name, s in sorted(trawl.items()):
        if depends(s).get(step_name) != "service_completed_successfully":
            problems.append(f"{name} does not wait for {step_name} to succeed")
        for v in s.get("volumes", []):
            target = v.split(":")[1] if isinstance(v, str) and ":" in v else (v.get("target") if isinstance(v, dict) else "")
            if target and target.rstrip("/") == "/var/lib/trawl":
                problems.append(f"{name} still mounts a volume at /var/lib/trawl")
    if "trawl-output" in named:
        problems.append("the old trawl-output volume is still declared")
    r.check(not problems, f"[{label}] every trawl container starts after {step_name} and mounts no output volume", "; ".join(problems))

    # -- published ports ---------------------------------------------------------------------------
    problems = []
    for name, s in sorted((raw.get("services") or {}).items()):
        for p in s.get("ports", []):
            if not str(p).startswith("${TRAWL_BIND_ADDRESS:-127.0.0.1}:"):
                problems.append(f"{name}: {p}")
    r.check(not problems, f"[{label}] every published port listens on TRAWL_BIND_ADDRESS (127.0.0.1 by default)", "; ".join(problems))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    deploy = Path(__file__).resolve().parents[1]
    parser.add_argument("--compose", type=Path, default=deploy / "compose.yaml")
    parser.add_argument("--env-example", type=Path, default=deploy / "compose.env.example")
    args = parser.parse_args()
    r = Report()

    text = args.compose.read_text()
    raw = yaml.safe_load(text)
    check(r, raw, {}, "defaults")
    # The keys are the operator's to change: one variable must move the server, the bucket step
    # and every trawl container together.
    check(r, raw, {"TRAWL_S3_ACCESS_KEY": "operator-key-id", "TRAWL_S3_SECRET_KEY": "operator-secret"}, "own keys")

    used = {m.group(1) or m.group(4) for m in SUBST.finditer(text) if m.group(0) != "$$"} - SHELL_VARIABLES
    example = args.env_example.read_text()
    undocumented = sorted(v for v in used if not re.search(rf"^#?\s*{re.escape(v)}=", example, re.M))
    r.check(not undocumented, f"compose.env.example describes every variable compose.yaml substitutes ({', '.join(sorted(used))})", f"missing {undocumented}")

    print(f"check-compose: {r.passed} passed, {r.failed} failed")
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
