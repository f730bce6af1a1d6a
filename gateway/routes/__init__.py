"""REST routes; each is a thin translation: path and body → request proto → `Gateway`
operation → JSON. Most are declared on their RPCs (`declared`), the store registry and tokens
included; the modules hold the routes that stream, upload, fill a repeated field from the path,
or follow jobs."""

from __future__ import annotations

from fastapi import APIRouter

from gateway.routes import backup, corpus, dashboard, declared, drawers, health, jobs, search

ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    backup.router,
    declared.router,
    drawers.router,
    search.router,
    corpus.router,
    jobs.router,
    dashboard.router,
)
