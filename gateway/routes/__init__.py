"""REST routes; each is a thin translation: path and body → request proto → `Gateway`
operation → JSON. Most are declared on their RPCs (`declared`); the modules hold the routes
that stream, upload, or own gateway state (stores, tokens, jobs)."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.routes import corpus, declared, drawers, health, jobs, search, stores, tokens

ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    stores.router,
    tokens.router,
    declared.router,
    drawers.router,
    search.router,
    corpus.router,
    jobs.router,
)
