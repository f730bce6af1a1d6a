"""How the launcher tells that a process it started is ready: a gRPC tier's health service
reports SERVING, or an HTTP endpoint (the gateway's `/readyz`) answers 200."""

from __future__ import annotations

import http.client
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Protocol

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.runtime.tls import TlsSettings, channel_credentials, channel_options

_CHECK_TIMEOUT_S = 1.0
# Local probes only: a proxy from the environment (http_proxy) must not see them.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class Probe(Protocol):
    """One way of asking a process whether it is ready."""

    @property
    def ready_word(self) -> str:
        """What the launcher prints once the probe has passed."""
        ...

    def ready(self, host: str, port: int) -> bool:
        """One bounded check; False for anything but a clear yes."""
        ...

    def address(self, host: str, port: int) -> str:
        """Where the process listens, as a person would write it."""
        ...


@dataclass(frozen=True)
class GrpcHealth:
    """Ready when the gRPC health service reports `service` SERVING."""

    service: str
    ready_word: str = "SERVING"

    def ready(self, host: str, port: int) -> bool:
        tls = TlsSettings()
        credentials = channel_credentials(tls)
        target = f"{host}:{port}"
        opened = (
            grpc.secure_channel(target, credentials, options=channel_options(tls))
            if credentials is not None
            else grpc.insecure_channel(target)
        )
        with opened as channel:
            stub = health_pb2_grpc.HealthStub(channel)
            try:
                reply = stub.Check(
                    health_pb2.HealthCheckRequest(service=self.service), timeout=_CHECK_TIMEOUT_S
                )
            except grpc.RpcError:
                return False
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)

    def address(self, host: str, port: int) -> str:
        return f"{host}:{port}"


@dataclass(frozen=True)
class HttpReady:
    """Ready when `GET http://host:port<path>` answers 200."""

    path: str = "/readyz"
    ready_word: str = "ready"

    def ready(self, host: str, port: int) -> bool:
        tls = TlsSettings()
        opener = _DIRECT
        if tls.serves_tls:  # the gateway serves HTTPS: check it against the stack's CA
            context = ssl.create_default_context(
                cafile=str(tls.ca_file) if tls.ca_file is not None else None
            )
            if tls.server_name:
                context.check_hostname = False  # the name is checked by the CA's signature
            opener = urllib.request.build_opener(
                urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=context)
            )
        try:
            with opener.open(self.address(host, port) + self.path, timeout=_CHECK_TIMEOUT_S) as r:
                return int(r.status) == 200
        except (urllib.error.URLError, OSError):  # HTTPError (e.g. 503) is a URLError
            return False
        except http.client.HTTPException:  # something that is not HTTP answers on the port
            return False

    def address(self, host: str, port: int) -> str:
        return http_base(host, port)


def http_base(host: str, port: int) -> str:
    """`http://host:port` (https when this process's TLS settings serve it), with an IPv6
    host bracketed."""
    scheme = "https" if TlsSettings().serves_tls else "http"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"
