"""The operator dashboard's bundle at /dashboard/ (gateway/dashboard, decision 0020).

Files of the built bundle are served as they are; any other path under /dashboard/ is a page
of the single-page app and gets its index.html, so a reloaded or shared link opens the same
page. The bundle talks to the REST API like any client (bearer token); nothing here needs one,
since the bundle holds no data. Paths are resolved inside the bundle directory only.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response

from gateway.errors import error_body

router = APIRouter(include_in_schema=False)

# Hashed assets never change under their name; the page itself must be re-read.
_IMMUTABLE = "public, max-age=31536000, immutable"
_NO_CACHE = "no-cache"


def _bundle(request: Request) -> Path:
    return Path(request.app.state.settings.dashboard_bundle).resolve()


@router.get("/dashboard")
async def dashboard_root() -> Response:
    return RedirectResponse("/dashboard/", status_code=308)


@router.get("/dashboard/{path:path}")
async def dashboard(request: Request, path: str) -> Response:
    bundle = _bundle(request)
    index = bundle / "index.html"
    if not index.is_file():
        return JSONResponse(
            error_body(
                "unavailable",
                "the dashboard is not built here: run `make dashboard` (`make run` builds it) "
                "or set ENGRAM_GATEWAY_DASHBOARD_DIR",
            ),
            status_code=503,
        )
    if path:
        wanted = (bundle / path).resolve()
        if wanted.is_relative_to(bundle) and wanted.is_file():
            immutable = wanted.parent.name == "assets"
            return FileResponse(
                wanted, headers={"Cache-Control": _IMMUTABLE if immutable else _NO_CACHE}
            )
        if path.startswith("assets/"):
            return JSONResponse(error_body("not_found", f"no asset {path!r}"), status_code=404)
    return FileResponse(index, headers={"Cache-Control": _NO_CACHE})
