"""The Kustomize base and overlays render with `kubectl kustomize`, and what they render hangs
together: every ConfigMap a workload reads exists, every tier address in the config names a
Service port, and every Service selects a workload. Skipped where kubectl is not installed
(the structural checks in test_manifests.py run everywhere)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
KUBECTL = shutil.which("kubectl")
TARGETS = [DEPLOY / "base", *sorted(p for p in (DEPLOY / "overlays").iterdir() if p.is_dir())]
WORKLOADS = {"Deployment", "StatefulSet"}

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")


def _render(target: Path) -> list[dict[str, Any]]:
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "kustomize", str(target)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"kubectl kustomize {target} failed:\n{done.stderr}"
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def _named(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


@pytest.mark.parametrize("target", TARGETS, ids=lambda p: str(p.relative_to(DEPLOY)))
def test_renders_and_references_resolve(target: Path) -> None:
    docs = _render(target)
    config_maps, services = _named(docs, "ConfigMap"), _named(docs, "Service")
    workloads = [d for d in docs if d["kind"] in WORKLOADS]
    assert {w["metadata"]["name"] for w in workloads} >= {
        "embedder",
        "retrieval",
        "corpus",
        "authoring",
        "gateway",
    }
    assert all(d["metadata"].get("namespace") == "engram" for d in workloads)

    for workload in workloads:
        for container in workload["spec"]["template"]["spec"]["containers"]:
            for source in container.get("envFrom", []):
                if "configMapRef" in source:
                    assert source["configMapRef"]["name"] in config_maps, (
                        f"{workload['metadata']['name']} reads a ConfigMap that is not rendered"
                    )
            for env in container.get("env", []):
                ref = env.get("valueFrom", {}).get("configMapKeyRef")
                if ref:
                    assert ref["key"] in config_maps[ref["name"]]["data"], (
                        f"{workload['metadata']['name']}: {ref['name']} has no key {ref['key']}"
                    )

    ports = {
        (name, int(port["port"])) for name, s in services.items() for port in s["spec"]["ports"]
    }
    for config in config_maps.values():
        for key, value in config.get("data", {}).items():
            if key.endswith("_ADDR"):
                host, _, port = str(value).rpartition(":")
                where = (host.split(".")[0], int(port))
            elif key.endswith("_URL") and "://" in str(value):
                url = urlparse(str(value))
                where = (str(url.hostname).split(".")[0], int(url.port or 0))
            else:
                continue
            assert where in ports, f"{key}={value} names no Service port"

    labels = [w["spec"]["template"]["metadata"]["labels"] for w in workloads]
    labels += [
        d["spec"]["template"]["metadata"]["labels"]
        for d in docs
        if d["kind"] in WORKLOADS | {"DaemonSet"}
    ]
    for name, service in services.items():
        selector = service["spec"].get("selector", {})
        assert any(selector.items() <= lab.items() for lab in labels), (
            f"Service {name} selects no workload ({selector})"
        )
