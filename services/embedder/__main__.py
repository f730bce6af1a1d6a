"""Run the embedder tier: `engram-embedder` or `python -m services.embedder`."""

from __future__ import annotations

import asyncio
import logging
import sys

from services.embedder.core import choose_device, load_model, resolve_model_path
from services.embedder.deps import EmbedderDeps
from services.embedder.server import create_server
from services.embedder.settings import EmbedderSettings
from services.runtime.errors import FailedPrecondition
from services.runtime.lifecycle import serve_until_signalled
from services.runtime.logs import configure_logging
from services.runtime.tracing import configure_tracing

logger = logging.getLogger("services.embedder")


async def _serve(settings: EmbedderSettings, device: str) -> None:
    deps = EmbedderDeps(settings)
    tier = create_server(settings, deps)
    tier.metrics.serve(settings.metrics_port, settings.host)

    async def load_then_serve() -> None:
        path = resolve_model_path(settings.model)
        model = await asyncio.to_thread(
            load_model,
            path,
            device=device,
            fp16=settings.fp16,
            torch_threads=settings.torch_threads,
            name=settings.model or "all-MiniLM-L6-v2",
        )
        deps.attach(model).start()
        await tier.set_serving(True)

    async def close() -> None:
        if deps.batcher is not None:
            await deps.batcher.close()

    await serve_until_signalled(
        tier, grace_s=settings.shutdown_grace_s, on_started=load_then_serve, on_stopping=close
    )


def main() -> None:
    settings = EmbedderSettings()
    configure_logging("embedder", level=settings.log_level, fmt=settings.log_format)
    configure_tracing("embedder")
    import torch

    try:
        device = choose_device(
            settings.device, allow_cpu=settings.allow_cpu, cuda_available=torch.cuda.is_available()
        )
        resolve_model_path(settings.model)
    except FailedPrecondition as error:
        logger.error("refusing to start: %s", error.message)
        print(f"engram-embedder: {error.message}", file=sys.stderr)
        sys.exit(2)
    asyncio.run(_serve(settings, device))


if __name__ == "__main__":
    main()
