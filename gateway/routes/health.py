"""Liveness, readiness (every tier SERVING) and Prometheus metrics. No token needed."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

router = APIRouter(tags=["health"])

SERVING = "SERVING"


@router.get("/healthz", summary="the process answers")
async def healthz() -> JSONResponse:
    return JSONResponse({"status": "ok"})


@router.get("/readyz", summary="every tier has a replica SERVING")
async def readyz(request: Request) -> JSONResponse:
    """Ready when each tier has a replica SERVING. One replica of a partitioned tier down
    makes only its stores answer 503 (naming it); the gateway stays in rotation for the rest.
    The body lists every replica."""
    tiers = await request.app.state.deps.tier_health()
    serving: dict[str, bool] = {}
    for name, status in tiers.items():
        tier = name.split("/", 1)[0]
        serving[tier] = serving.get(tier, False) or status == SERVING
    ready = all(serving.values())
    return JSONResponse(
        {"status": "ready" if ready else "not ready", "tiers": tiers},
        status_code=200 if ready else 503,
    )


@router.get("/metrics", summary="Prometheus metrics", include_in_schema=False)
async def metrics(request: Request) -> Response:
    """The HTTP faces' metrics, then the public gRPC server's (`engram_grpc_*`) when it runs."""
    text = generate_latest(request.app.state.metrics.registry)
    rpc = getattr(request.app.state, "grpc_metrics", None)
    if rpc is not None:
        text += generate_latest(rpc.registry)
    return Response(text, media_type=CONTENT_TYPE_LATEST)
