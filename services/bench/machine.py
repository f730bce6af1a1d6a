"""What machine a figure was measured on, so runs on different machines are never confused."""

from __future__ import annotations

import os
import platform
from typing import Any


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe_machine() -> dict[str, Any]:
    """CPU model, usable cores, memory, GPU (if torch sees one) and software versions."""
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory_gib = round(pages / 2**30, 1)
    except (ValueError, OSError):
        memory_gib = None
    return {
        "cpu": _cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "memory_gib": memory_gib,
        "gpu": gpu,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
    }
