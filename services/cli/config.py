"""Every setting of every process, as one table: `engram config` prints it, the README embeds
it, and a test keeps the two in step."""

from __future__ import annotations

from pydantic_settings import BaseSettings

from gateway.settings import GatewaySettings
from services.authoring.settings import AuthoringSettings
from services.corpus.settings import CorpusSettings
from services.embedder.settings import EmbedderSettings
from services.launcher.settings import LauncherSettings
from services.retrieval.settings import RetrievalSettings
from services.runtime.settings import StorageSettings
from services.runtime.tls import TlsSettings
from services.runtime.tracing import TracingSettings

# Settings classes in README order. A new tier adds its class here.
SETTINGS_CLASSES: tuple[type[BaseSettings], ...] = (
    LauncherSettings,
    StorageSettings,
    TlsSettings,
    TracingSettings,
    EmbedderSettings,
    RetrievalSettings,
    CorpusSettings,
    AuthoringSettings,
    GatewaySettings,
)


def setting_rows() -> list[tuple[str, str, str]]:
    """(variable, default, description) for every setting, de-duplicated by variable."""
    rows: dict[str, tuple[str, str, str]] = {}
    for cls in SETTINGS_CLASSES:
        prefix = str(cls.model_config.get("env_prefix", ""))
        for name, field in cls.model_fields.items():
            variable = f"{prefix}{name}".upper()
            default = field.default
            shown = "(empty)" if default in ("", None) else str(default)
            rows.setdefault(variable, (variable, shown, field.description or ""))
    return list(rows.values())


def markdown() -> str:
    """The configuration table as markdown."""
    lines = ["| variable | default | what it sets |", "|---|---|---|"]
    lines += [f"| `{v}` | `{d}` | {desc} |" for v, d, desc in setting_rows()]
    return "\n".join(lines)


START_MARK = "<!-- config-table:start -->"
END_MARK = "<!-- config-table:end -->"


def readme_table(readme: str) -> str:
    """The configuration table currently embedded in the README text."""
    start = readme.index(START_MARK) + len(START_MARK)
    return readme[start : readme.index(END_MARK)].strip()


def write_readme_table(readme: str) -> str:
    """The README text with its configuration table replaced by the current one."""
    start = readme.index(START_MARK) + len(START_MARK)
    return readme[:start] + "\n" + markdown() + "\n" + readme[readme.index(END_MARK) :]
