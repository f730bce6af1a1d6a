"""Settings are really read from the environment, with the tier's prefix."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from services.embedder.settings import EmbedderSettings
from services.runtime.settings import StorageSettings


def test_embedder_settings_come_from_prefixed_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDER_PORT", "50999")
    monkeypatch.setenv("ENGRAM_EMBEDDER_ALLOW_CPU", "1")
    monkeypatch.setenv("ENGRAM_EMBEDDER_MAX_BATCH", "17")
    monkeypatch.setenv("ENGRAM_EMBEDDER_DATA_DIR", "/tmp/engram-test-data")
    settings = EmbedderSettings()
    assert settings.port == 50999
    assert settings.allow_cpu is True
    assert settings.max_batch == 17
    assert settings.data_dir == Path("/tmp/engram-test-data")


def test_defaults_apply_without_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_EMBEDDER_ALLOW_CPU", raising=False)
    settings = EmbedderSettings()
    assert settings.allow_cpu is False, "CPU must be opt-in"
    assert settings.dynamic_batching is True


def test_invalid_environment_value_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_EMBEDDER_MAX_BATCH", "0")
    with pytest.raises(ValidationError):
        EmbedderSettings()


def test_storage_settings_read_redis_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_REDIS_URL", "redis://127.0.0.1:6390/3")
    monkeypatch.setenv("ENGRAM_VECTOR_BACKEND", "qdrant")
    storage = StorageSettings()
    assert storage.redis_url == "redis://127.0.0.1:6390/3"
    assert storage.vector_backend == "qdrant"
