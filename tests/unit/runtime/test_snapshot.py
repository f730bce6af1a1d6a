"""Restoring a tier snapshot never writes outside the store's folder, and refuses to write
over a store that holds data."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from services.runtime.errors import Conflict, InvalidInput
from services.runtime.snapshot import FORMAT, MANIFEST, restore_files


def _archive(path: Path, members: dict[str, bytes], *, link: str | None = None) -> Path:
    manifest = {"format": FORMAT, "tier": "corpus", "collections": {}}
    with tarfile.open(path, "w") as out:
        for name, data in {MANIFEST: json.dumps(manifest).encode(), **members}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
        if link is not None:
            info = tarfile.TarInfo(link)
            info.type = tarfile.SYMTYPE
            info.linkname = "/etc/passwd"
            out.addfile(info)
    return path


@pytest.mark.parametrize(
    ("members", "link"),
    [
        ({"files/../escaped": b"x"}, None),
        ({"files/a/../../escaped": b"x"}, None),
        ({"files/ok": b"x"}, "files/sneaky"),
    ],
)
def test_hostile_members_are_refused_and_leave_nothing(
    tmp_path: Path, members: dict[str, bytes], link: str | None
) -> None:
    archive = _archive(tmp_path / "a.tar", members, link=link)
    folder = tmp_path / "data" / "store"
    with pytest.raises(InvalidInput, match="not a plain store file"):
        restore_files(archive, folder, "corpus")
    assert not folder.exists() and not (tmp_path / "data" / "escaped").exists()


def test_a_store_with_data_is_not_overwritten(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.tar", {"files/catalog.sqlite": b"new"})
    folder = tmp_path / "store"
    folder.mkdir()
    (folder / "catalog.sqlite").write_bytes(b"old")
    with pytest.raises(Conflict, match="already holds data"):
        restore_files(archive, folder, "corpus")
    assert (folder / "catalog.sqlite").read_bytes() == b"old"


def test_a_snapshot_of_another_tier_is_refused(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "a.tar", {"files/x": b"x"})
    with pytest.raises(InvalidInput, match="'corpus' snapshot"):
        restore_files(archive, tmp_path / "store", "retrieval")
    assert restore_files(archive, tmp_path / "store", "corpus") == 1
    assert (tmp_path / "store" / "x").read_bytes() == b"x"
