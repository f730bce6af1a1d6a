"""REST routes, one module per area; each route is a thin translation: path and body → request
proto → `Gateway` operation → JSON."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.routes import authoring, corpus, drawers, health, jobs, raw, search, stores, tokens

ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    stores.router,
    tokens.router,
    drawers.router,
    search.router,
    raw.router,
    corpus.router,
    authoring.router,
    jobs.router,
)
