"""The Kubernetes manifests hold to the deployment standard: every workload non-root with a
read-only root filesystem, resource requests and limits, probes; kustomizations list files
that exist. (Rendering with `kubectl kustomize` needs kubectl, which CI does not have.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
WORKLOADS = {"Deployment", "StatefulSet"}


def _documents() -> list[tuple[Path, dict[str, Any]]]:
    docs = []
    for path in sorted((DEPLOY / "base").glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        docs += [(path, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return docs


def _workloads() -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{path.name}:{doc['metadata']['name']}", doc)
        for path, doc in _documents()
        if doc["kind"] in WORKLOADS
    ]


@pytest.mark.parametrize("kustomization", sorted(DEPLOY.rglob("kustomization.yaml")), ids=str)
def test_kustomization_resources_exist(kustomization: Path) -> None:
    spec = yaml.safe_load(kustomization.read_text())
    for resource in spec.get("resources", []):
        assert (kustomization.parent / resource).exists(), f"{kustomization}: {resource} missing"


def test_every_base_file_is_listed_in_the_kustomization() -> None:
    listed = set(yaml.safe_load((DEPLOY / "base" / "kustomization.yaml").read_text())["resources"])
    files = {p.name for p in (DEPLOY / "base").glob("*.yaml")} - {"kustomization.yaml"}
    assert files == listed, f"unlisted: {files - listed}, missing: {listed - files}"


@pytest.mark.parametrize(
    ("name", "workload"), _workloads(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_workloads_are_hardened_and_probed(name: str, workload: dict[str, Any]) -> None:
    pod = workload["spec"]["template"]["spec"]
    assert pod["securityContext"].get("runAsNonRoot") is True, f"{name}: must run as non-root"
    for container in pod["containers"]:
        security = container["securityContext"]
        assert security.get("readOnlyRootFilesystem") is True, f"{name}: root FS must be read-only"
        assert security.get("allowPrivilegeEscalation") is False, f"{name}: no escalation"
        resources = container["resources"]
        assert resources.get("requests") and resources.get("limits"), f"{name}: resources"
        assert "readinessProbe" in container and "livenessProbe" in container, f"{name}: probes"


def test_engram_tiers_probe_their_grpc_health_service() -> None:
    for name, workload in _workloads():
        container = workload["spec"]["template"]["spec"]["containers"][0]
        if container.get("image") != "engram":
            continue
        probe = container["readinessProbe"]
        assert "grpc" in probe and probe["grpc"]["service"].startswith("engram.v1."), name
