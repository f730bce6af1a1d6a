"""`engram import`'s planning: discovery of the standard places, what a re-run sends, and an
export checked whole (and cut in parts of whole conversations) before anything is sent."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from services.cli import import_plan
from services.cli.import_plan import LocalFile, RemoteFile, check_export, plan_sync
from services.runtime.errors import InvalidInput

FIXTURES = Path(__file__).parents[1] / "corpus" / "fixtures"


def _local(key: str, sha: str) -> LocalFile:
    folder, _, name = key.rpartition("/")
    return LocalFile(folder=folder, name=name, sha256=sha, size=1)


def _remote(key: str, sha: str) -> RemoteFile:
    folder, _, name = key.rpartition("/")
    return RemoteFile(id=f"f_{name}", folder=folder, name=name, sha256=sha)


def test_a_rerun_sends_only_what_changed_and_a_mirror_removes_what_is_gone() -> None:
    local = [_local("vault/n/a.md", "1"), _local("vault/n/b.md", "2"), _local("vault/n/c.md", "3")]
    remote = [
        _remote("vault/n/a.md", "1"),
        _remote("vault/n/b.md", "old"),
        _remote("vault/n/d.md", "4"),
    ]
    mirrored = plan_sync(local, remote, mirror=True)
    assert [f.key for f in mirrored.upload] == ["vault/n/c.md"]
    assert [(new.key, old.id) for new, old in mirrored.replace] == [("vault/n/b.md", "f_b.md")]
    assert [f.key for f in mirrored.remove] == ["vault/n/d.md"]
    assert mirrored.unchanged == 1
    assert mirrored.summary() == "1 new, 1 changed, 1 unchanged, 1 removed"
    kept = plan_sync(local, remote, mirror=False)
    assert kept.remove == [], "transcripts pruned from disk stay in memory"


def test_claude_code_and_codex_are_found_in_their_folders(tmp_path: Path) -> None:
    projects = tmp_path / ".claude" / "projects"
    (projects / "-home-dev-shop").mkdir(parents=True)
    (projects / "-home-dev-shop" / "7f3e.jsonl").write_bytes(
        (FIXTURES / "claude_code_session.jsonl").read_bytes()
    )
    (projects / "-home-dev-shop" / "notes.txt").write_text("not a transcript")
    found = import_plan.claude_code_files(projects)
    assert [(f.folder, f.name) for f in found] == [("claude-code/-home-dev-shop", "7f3e.jsonl")]

    sessions = tmp_path / ".codex" / "sessions" / "2025" / "09" / "02"
    sessions.mkdir(parents=True)
    (sessions / "rollout-2025-09-02T10-00-00-abc.jsonl").write_text("{}\n")
    found = import_plan.codex_files(tmp_path / ".codex" / "sessions")
    assert [f.folder for f in found] == ["codex/2025/09/02"]

    with pytest.raises(InvalidInput, match="no Codex sessions found there"):
        import_plan.codex_files(tmp_path / "nowhere")


def test_the_standard_places_follow_the_tools_own_variables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "cx"))
    assert import_plan.claude_code_home() == tmp_path / "cc" / "projects"
    assert import_plan.codex_home() == tmp_path / "cx" / "sessions"


def test_a_vault_leaves_hidden_folders_out(tmp_path: Path) -> None:
    vault = tmp_path / "Notes"
    (vault / "daily").mkdir(parents=True)
    (vault / ".obsidian").mkdir()
    (vault / "index.md").write_text("# Index\n")
    (vault / "daily" / "2025-03-03.md").write_text("# Monday\n")
    (vault / ".obsidian" / "workspace.md").write_text("internal")
    (vault / "image.png").write_bytes(b"\x89PNG")
    found = import_plan.vault_files(vault, "Notes")
    assert [f.key for f in found] == ["vault/Notes/daily/2025-03-03.md", "vault/Notes/index.md"]


def test_an_export_is_read_from_its_zip_and_checked_whole(tmp_path: Path) -> None:
    body = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("chat.html", "<html></html>")
        zipped.writestr("conversations.json", body)
    assert import_plan.read_export_body(archive) == body
    checked = check_export(body, service="chatgpt", name="export.zip")
    assert checked.conversations == 2 and len(checked.parts) == 1
    assert checked.parts[0].key == "chatgpt/conversations.json"

    with pytest.raises(InvalidInput, match="is a ChatGPT export, not a claude_ai one"):
        check_export(body, service="claude_ai", name="export.zip")
    broken = body.replace(b'"mapping": {', b'"mapping": "gone", "was": {', 1)
    with pytest.raises(InvalidInput, match=r"conversation 1 'Sourdough hydration' .*mapping"):
        check_export(broken, service="chatgpt", name="export.zip")
    bare = tmp_path / "other.zip"
    with zipfile.ZipFile(bare, "w") as zipped:
        zipped.writestr("readme.txt", "hi")
    with pytest.raises(InvalidInput, match=r"zip without a conversations\.json"):
        import_plan.read_export_body(bare)


def test_a_large_export_goes_in_parts_of_whole_conversations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conversations = [
        {
            "uuid": f"c{n}",
            "name": f"N{n}",
            "chat_messages": [{"sender": "human", "text": "x" * 400}],
        }
        for n in range(10)
    ]
    body = json.dumps(conversations).encode()
    monkeypatch.setattr(import_plan, "EXPORT_PART_BYTES", 1500)
    checked = check_export(body, service="claude_ai", name="conversations.json")
    assert len(checked.parts) > 1
    seen = []
    for part in checked.parts:
        assert part.body is not None and len(part.body) <= 1500
        seen += [c["uuid"] for c in json.loads(part.body)]
    assert seen == [f"c{n}" for n in range(10)]
    assert [p.name for p in checked.parts][:2] == [
        "conversations.part-001.json",
        "conversations.part-002.json",
    ]
