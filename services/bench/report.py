"""Rendering benchmark results: markdown tables on stdout and a JSON file per run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of `values`; NaN when there are none."""
    return float(np.percentile(values, q)) if len(values) else float("nan")


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table; floats rounded to something readable."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:,.1f}" if abs(value) >= 10 else f"{value:.3g}"
        return str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_results(results: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    """Write `<date>.json` and `<date>.md` (a later run the same day gets a time suffix)."""
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.now(UTC)
    stem = now.strftime("%Y-%m-%d")
    if (directory / f"{stem}.json").exists():
        stem = now.strftime("%Y-%m-%d-%H%M%S")
    json_path = directory / f"{stem}.json"
    md_path = directory / f"{stem}.md"
    json_path.write_text(json.dumps(results, indent=2, default=str))
    md_path.write_text(results.get("markdown", ""))
    return json_path, md_path
