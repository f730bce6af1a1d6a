"""TLS for every gRPC server and channel of the stack, and the gateway's HTTP, as settings:
certificates are read from files (as Kubernetes mounts a Secret), never from variables.

One set of variables for every process (`ENGRAM_TLS_*`; each pod mounts its own files):

- `ENGRAM_TLS_CERT_FILE` + `ENGRAM_TLS_KEY_FILE`: this process serves TLS with them (its gRPC
  port, the gateway's HTTP and public gRPC too), and presents them as a client certificate.
- `ENGRAM_TLS_CA_FILE`: the CA that signed the tiers' certificates; with it, every channel to
  a tier is TLS and checks the tier's certificate against it.
- `ENGRAM_TLS_REQUIRE_CLIENT_CERT`: servers accept only callers with a certificate from that
  CA (mutual TLS).

Unset, everything is plaintext on the loopback or inside the cluster network, as before.
"""

from __future__ import annotations

from pathlib import Path

import grpc
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.runtime.errors import FailedPrecondition


class TlsSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_TLS_", extra="ignore", frozen=True)

    cert_file: Path | None = Field(
        None, description="this process's certificate (PEM): it serves TLS with it"
    )
    key_file: Path | None = Field(None, description="the private key of cert_file (PEM)")
    ca_file: Path | None = Field(
        None,
        description="the CA (PEM) that signed the tiers' certificates: channels to tiers use "
        "TLS and check them against it",
    )
    require_client_cert: bool = Field(
        False, description="servers accept only callers with a certificate from ca_file (mTLS)"
    )
    server_name: str = Field(
        "",
        description="the name checked in a tier's certificate when it is not the host of the "
        "address dialled",
    )

    @property
    def serves_tls(self) -> bool:
        return self.cert_file is not None and self.key_file is not None

    def check(self) -> TlsSettings:
        """FailedPrecondition, in plain words, for a combination that cannot work."""
        if (self.cert_file is None) != (self.key_file is None):
            raise FailedPrecondition(
                "ENGRAM_TLS_CERT_FILE and ENGRAM_TLS_KEY_FILE go together: set both or neither"
            )
        if self.require_client_cert and (self.ca_file is None or not self.serves_tls):
            raise FailedPrecondition(
                "ENGRAM_TLS_REQUIRE_CLIENT_CERT needs ENGRAM_TLS_CA_FILE, ENGRAM_TLS_CERT_FILE "
                "and ENGRAM_TLS_KEY_FILE"
            )
        for path in (self.cert_file, self.key_file, self.ca_file):
            if path is not None and not path.is_file():
                raise FailedPrecondition(f"TLS file {path} does not exist or is not a file")
        return self


def _read(path: Path | None) -> bytes | None:
    return path.read_bytes() if path is not None else None


def server_credentials(tls: TlsSettings) -> grpc.ServerCredentials | None:
    """TLS credentials for a gRPC server, or None to serve plaintext."""
    tls.check()
    if not tls.serves_tls:
        return None
    key, cert = _read(tls.key_file), _read(tls.cert_file)
    assert key is not None and cert is not None
    return grpc.ssl_server_credentials(
        [(key, cert)],
        root_certificates=_read(tls.ca_file) if tls.require_client_cert else None,
        require_client_auth=tls.require_client_cert,
    )


def channel_credentials(tls: TlsSettings) -> grpc.ChannelCredentials | None:
    """TLS credentials for channels to tiers (with this process's certificate as a client
    certificate when it has one), or None for plaintext."""
    tls.check()
    if tls.ca_file is None:
        return None
    return grpc.ssl_channel_credentials(
        root_certificates=_read(tls.ca_file),
        private_key=_read(tls.key_file),
        certificate_chain=_read(tls.cert_file),
    )


def channel_options(tls: TlsSettings) -> list[tuple[str, str]]:
    return [("grpc.ssl_target_name_override", tls.server_name)] if tls.server_name else []
