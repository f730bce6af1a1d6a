"""What `engram import` brings in, and what a re-run changes: discovery of the standard places
people's histories live, and the plan that keeps a corpus folder in step with them.

Where things are found:

- **Claude Code**: ``~/.claude/projects/<project>/<session>.jsonl`` (``$CLAUDE_CONFIG_DIR``
  instead of ``~/.claude`` when set) → folder ``claude-code/<project>``.
- **Codex CLI**: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`` (``$CODEX_HOME`` instead of
  ``~/.codex``) → folder ``codex/YYYY/MM/DD``.
- **A Markdown vault** (Obsidian-style): every ``.md`` file under the folder, hidden folders
  (``.obsidian``, ``.trash``, ``.git``) left out → folder ``vault/<name>/<its folders>``.
- **ChatGPT / Claude.ai exports**: the ``conversations.json`` inside the export's zip (or the
  file itself), checked whole before anything is sent (`check_export`) → folder ``chatgpt`` or
  ``claude-ai``; an export over the corpus's size limit is sent in parts of whole
  conversations, each a valid export. The folder mirrors the latest export: importing a newer
  one replaces the older's files.

A re-run compares by catalog path and content hash (`plan_sync`): new files are uploaded,
changed ones replaced (the old file and its raw chunks deleted first), unchanged ones left
alone. Only a *mirrored* source (a vault) also deletes what is gone from it: Claude Code and
Codex prune old sessions from disk, and memory must outlive that.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from services.corpus.core import ChunkReport, Place
from services.corpus.core.chunk_export import ExportFormat, read_conversations, sniff_export
from services.corpus.core.tiers import HARD_LIMIT_BYTES
from services.runtime.errors import InvalidInput

EXPORT_MEMBER: Final = "conversations.json"
# Parts of a large export stay well inside the corpus's hard limit on one file.
EXPORT_PART_BYTES: Final = HARD_LIMIT_BYTES * 4 // 5
_HIDDEN: Final = "."
# The catalog folder each source lands under (what a re-run lists to compare against).
FOLDERS: Final = {
    "chatgpt": "chatgpt",
    "claude_ai": "claude-ai",
    "claude-code": "claude-code",
    "codex": "codex",
    "vault": "vault",
}


@dataclass(frozen=True, slots=True)
class LocalFile:
    """One file to bring in: where it goes in the catalog, and its bytes (or where they are)."""

    folder: str
    name: str
    sha256: str
    size: int
    path: Path | None = None  # read from here when sent
    body: bytes | None = None  # or sent as these bytes (an export's conversations)

    @property
    def key(self) -> str:
        return f"{self.folder}/{self.name}" if self.folder else self.name


@dataclass(frozen=True, slots=True)
class RemoteFile:
    """A file the store's corpus already holds."""

    id: str
    folder: str
    name: str
    sha256: str

    @property
    def key(self) -> str:
        return f"{self.folder}/{self.name}" if self.folder else self.name


@dataclass(slots=True)
class SyncPlan:
    upload: list[LocalFile] = field(default_factory=list)  # not in the corpus yet
    replace: list[tuple[LocalFile, RemoteFile]] = field(default_factory=list)  # changed
    remove: list[RemoteFile] = field(default_factory=list)  # gone from a mirrored source
    unchanged: int = 0

    @property
    def to_send(self) -> list[LocalFile]:
        return self.upload + [local for local, _ in self.replace]

    def summary(self) -> str:
        parts = [
            f"{len(self.upload)} new",
            f"{len(self.replace)} changed",
            f"{self.unchanged} unchanged",
        ]
        if self.remove:
            parts.append(f"{len(self.remove)} removed")
        return ", ".join(parts)


def plan_sync(
    local: Iterable[LocalFile], remote: Iterable[RemoteFile], *, mirror: bool
) -> SyncPlan:
    """What to send, replace and (for a mirrored source) remove so the corpus matches."""
    held = {file.key: file for file in remote}
    plan = SyncPlan()
    seen: set[str] = set()
    for file in local:
        seen.add(file.key)
        existing = held.get(file.key)
        if existing is None:
            plan.upload.append(file)
        elif existing.sha256 != file.sha256:
            plan.replace.append((file, existing))
        else:
            plan.unchanged += 1
    if mirror:
        plan.remove = [file for key, file in held.items() if key not in seen]
    return plan


def _digest(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
            size += len(block)
    return digest.hexdigest(), size


def on_disk(path: Path, folder: str) -> LocalFile:
    """A file on disk, hashed, to go into `folder`."""
    sha, size = _digest(path)
    return LocalFile(folder=folder, name=path.name, sha256=sha, size=size, path=path)


def _visible(path: Path, root: Path) -> bool:
    return not any(part.startswith(_HIDDEN) for part in path.relative_to(root).parts)


def _folder(prefix: str, relative: Path) -> str:
    parts = [prefix, *relative.parts]
    return "/".join(part for part in parts if part)


def claude_code_home() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude") / "projects"


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex") / "sessions"


def _require_dir(root: Path, what: str) -> None:
    if not root.is_dir():
        raise InvalidInput(f"{root} is not a folder: no {what} found there", field="path")


def claude_code_files(root: Path) -> list[LocalFile]:
    """Every Claude Code session transcript under `root` (the projects folder)."""
    _require_dir(root, "Claude Code projects")
    found = sorted(p for p in root.glob("*/*.jsonl") if p.is_file() and _visible(p, root))
    return [on_disk(p, _folder(FOLDERS["claude-code"], p.parent.relative_to(root))) for p in found]


def codex_files(root: Path) -> list[LocalFile]:
    """Every Codex rollout under `root` (the sessions folder, by date)."""
    _require_dir(root, "Codex sessions")
    found = sorted(p for p in root.rglob("rollout-*.jsonl") if p.is_file() and _visible(p, root))
    return [on_disk(p, _folder(FOLDERS["codex"], p.parent.relative_to(root))) for p in found]


def vault_folder(name: str) -> str:
    """The catalog folder a vault of this name lands under."""
    return _folder(FOLDERS["vault"], Path(name))


def vault_files(root: Path, name: str) -> list[LocalFile]:
    """Every Markdown note of a vault, hidden folders left out."""
    _require_dir(root, "Markdown vault")
    found = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.suffix.lower() in (".md", ".markdown") and _visible(p, root)
    )
    base = vault_folder(name)
    return [on_disk(p, _folder(base, p.parent.relative_to(root))) for p in found]


def read_export_body(path: Path) -> bytes:
    """An export's conversations.json: the file itself, or the member of the export's zip."""
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file", field="path")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = [m for m in archive.namelist() if m.rsplit("/", 1)[-1] == EXPORT_MEMBER]
            if not members:
                raise InvalidInput(
                    f"{path} is a zip without a {EXPORT_MEMBER}: is it the export's zip?",
                    field="path",
                )
            return archive.read(sorted(members, key=len)[0])
    return path.read_bytes()


@dataclass(frozen=True, slots=True)
class CheckedExport:
    service: ExportFormat
    conversations: int
    parts: list[LocalFile]


def check_export(body: bytes, *, service: ExportFormat, name: str) -> CheckedExport:
    """Read every conversation of an export before anything is sent; InvalidInput naming the
    line and conversation at fault. Returns the files to send: the export whole, or in parts
    of whole conversations when it is over `EXPORT_PART_BYTES`."""
    found = sniff_export(body[:8192])
    if found is None:
        raise InvalidInput(
            f"{name} is not a ChatGPT or Claude.ai export (a JSON array of conversations)",
            field="path",
        )
    if found != service:
        shown = "ChatGPT" if found == "chatgpt" else "Claude.ai"
        raise InvalidInput(f"{name} is a {shown} export, not a {service} one", field="path")
    places = [place for _, place in read_conversations(
        io.BytesIO(body), export=service, name=name, report=ChunkReport()
    )]  # fmt: skip
    folder = FOLDERS[service]
    if len(body) <= EXPORT_PART_BYTES:
        part = LocalFile(
            folder=folder,
            name=EXPORT_MEMBER,
            sha256=hashlib.sha256(body).hexdigest(),
            size=len(body),
            body=body,
        )
        return CheckedExport(service, len(places), [part])
    parts = []
    for number, group in enumerate(_groups(body, places), 1):
        piece = b"[" + b",\n".join(group) + b"]\n"
        parts.append(
            LocalFile(
                folder=folder,
                name=f"conversations.part-{number:03d}.json",
                sha256=hashlib.sha256(piece).hexdigest(),
                size=len(piece),
                body=piece,
            )
        )
    return CheckedExport(service, len(places), parts)


def _groups(body: bytes, places: list[Place]) -> Iterator[list[bytes]]:
    group: list[bytes] = []
    size = 2
    for place in places:
        conversation = body[place.byte_start : place.byte_end]
        if group and size + len(conversation) + 2 > EXPORT_PART_BYTES:
            yield group
            group, size = [], 2
        group.append(conversation)
        size += len(conversation) + 2
    if group:
        yield group
