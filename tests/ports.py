"""Free TCP ports on 127.0.0.1 for tests that start processes on ports of their own choosing.

Asking the kernel for port 0 once per process can hand the same port out twice once the
probing socket is closed; a stack whose gateway landed on a tier's gRPC port then probes a
gRPC server over HTTP. `free_ports(n)` keeps every probing socket open until all n are
chosen, so the ports it returns are distinct."""

from __future__ import annotations

import socket
from contextlib import ExitStack


def free_ports(count: int) -> list[int]:
    """`count` distinct ports that were free a moment ago."""
    with ExitStack() as held:
        ports = []
        for _ in range(count):
            sock = held.enter_context(socket.socket())
            sock.bind(("127.0.0.1", 0))
            ports.append(int(sock.getsockname()[1]))
    return ports


def free_port() -> int:
    """One port that was free a moment ago."""
    return free_ports(1)[0]
