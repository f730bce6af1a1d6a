"""TLS as settings: a tier's gRPC server serves TLS with the certificate files it is given,
channels check it against the CA, plaintext callers are refused, mutual TLS refuses a caller
without a certificate, and a half-configured setting is refused in plain words."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.cli.__main__ import build_parser
from services.launcher.probes import GrpcHealth
from services.runtime.errors import FailedPrecondition
from services.runtime.grpc_client import create_channel
from services.runtime.grpc_server import TierServer, build_server
from services.runtime.settings import TierSettings
from services.runtime.tls import TlsSettings


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a root that signed none of these


def _issue(
    folder: Path, name: str, issuer: tuple[x509.Certificate, ec.EllipticCurvePrivateKey] | None
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[0].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=1))
        .not_valid_after(now + datetime.timedelta(hours=1))
    )
    if issuer is None:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
    else:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            False,
        )
    cert = builder.sign(issuer[1] if issuer else key, hashes.SHA256())
    (folder / f"{name}.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / f"{name}.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert, key


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    folder = tmp_path_factory.mktemp("pki")
    ca = _issue(folder, "ca", None)
    _issue(folder, "server", ca)
    _issue(folder, "client", ca)
    _issue(folder, "other-ca", None)
    return Pki(
        folder / "ca.crt",
        folder / "server.crt",
        folder / "server.key",
        folder / "client.crt",
        folder / "client.key",
        folder / "other-ca.crt",
    )


async def _serving(tls: TlsSettings) -> TierServer:
    server = build_server(
        TierSettings.model_construct(host="127.0.0.1", port=0),
        tier="test",
        register=lambda _: None,
        service_names=[],
        tls=tls,
    )
    await server.start()
    await server.set_serving(True)
    return server


@pytest.fixture
async def tls_server(pki: Pki) -> AsyncIterator[TierServer]:
    server = await _serving(TlsSettings(cert_file=pki.server_cert, key_file=pki.server_key))
    yield server
    await server.stop(0)


async def _check(port: int, tls: TlsSettings | None) -> grpc.StatusCode:
    channel = (
        create_channel(f"127.0.0.1:{port}", tls=tls)
        if tls is not None
        else grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    )
    try:
        await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        return grpc.StatusCode.OK
    except grpc.aio.AioRpcError as error:
        return error.code()
    finally:
        await channel.close()


async def test_a_tls_tier_answers_channels_that_trust_its_ca_only(
    pki: Pki, tls_server: TierServer
) -> None:
    assert await _check(tls_server.port, TlsSettings(ca_file=pki.ca)) == grpc.StatusCode.OK
    assert await _check(tls_server.port, None) == grpc.StatusCode.UNAVAILABLE, "no plaintext"
    stranger = TlsSettings(ca_file=pki.other_ca)  # trusts another root, not our CA
    assert await _check(tls_server.port, stranger) == grpc.StatusCode.UNAVAILABLE


async def test_mutual_tls_refuses_a_caller_without_a_certificate(pki: Pki) -> None:
    server = await _serving(
        TlsSettings(
            cert_file=pki.server_cert,
            key_file=pki.server_key,
            ca_file=pki.ca,
            require_client_cert=True,
        )
    )
    try:
        anonymous = TlsSettings(ca_file=pki.ca)
        assert await _check(server.port, anonymous) == grpc.StatusCode.UNAVAILABLE
        client = TlsSettings(ca_file=pki.ca, cert_file=pki.client_cert, key_file=pki.client_key)
        assert await _check(server.port, client) == grpc.StatusCode.OK
    finally:
        await server.stop(0)


async def test_the_launcher_probe_speaks_tls_from_the_environment(
    pki: Pki, tls_server: TierServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe = GrpcHealth("")
    # The probe is synchronous: off the event loop that serves the tier.
    plaintext = await asyncio.to_thread(probe.ready, "127.0.0.1", tls_server.port)
    assert not plaintext, "a plaintext probe of a TLS tier"
    monkeypatch.setenv("ENGRAM_TLS_CA_FILE", str(pki.ca))
    assert await asyncio.to_thread(probe.ready, "127.0.0.1", tls_server.port)


def test_half_configured_tls_is_refused_in_plain_words(pki: Pki, tmp_path: Path) -> None:
    with pytest.raises(FailedPrecondition, match="go together"):
        TlsSettings(cert_file=pki.server_cert).check()
    with pytest.raises(FailedPrecondition, match="REQUIRE_CLIENT_CERT needs"):
        TlsSettings(require_client_cert=True).check()
    with pytest.raises(FailedPrecondition, match="does not exist"):
        TlsSettings(ca_file=tmp_path / "missing.pem").check()


async def test_engram_probe_checks_a_mutual_tls_tier_by_its_service_name(
    pki: Pki, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the Kubernetes TLS overlay runs as its probes (deploy/overlays/tls)."""
    server = await _serving(
        TlsSettings(
            cert_file=pki.server_cert,
            key_file=pki.server_key,
            ca_file=pki.ca,
            require_client_cert=True,
        )
    )
    try:
        for name, value in (
            ("SERVER_NAME", ""),  # `engram probe --server-name` sets it: restored after
            ("CA_FILE", pki.ca),
            ("CERT_FILE", pki.client_cert),
            ("KEY_FILE", pki.client_key),
        ):
            monkeypatch.setenv(f"ENGRAM_TLS_{name}", str(value))
        args = build_parser().parse_args(
            ["probe", f"127.0.0.1:{server.port}", "--server-name", "localhost"]
        )
        assert await asyncio.to_thread(args.func, args) == 0
        wrong = build_parser().parse_args(
            ["probe", f"127.0.0.1:{server.port}", "--server-name", "retrieval"]
        )
        assert await asyncio.to_thread(wrong.func, wrong) == 1, "a name the certificate lacks"
    finally:
        await server.stop(0)
