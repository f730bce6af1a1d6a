"""ApiKeys and ProviderSpec: where keys come from, that they stay hidden, and spec checks."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from services.authoring.core import ExtractiveInvoker
from services.authoring.invokers import (
    INVOKER_NAMES,
    AnthropicInvoker,
    ApiKeys,
    ClaudeCodeInvoker,
    CodexInvoker,
    OpenAIChatInvoker,
    ProviderSpec,
    build_invoker,
    default_model,
    key_provider,
)
from services.authoring.invokers._keys import reveal_key
from services.runtime.errors import FailedPrecondition, InvalidInput

ENGRAM_KEY = "sk-ant-engram-0123456789abcdef"
PLAIN_KEY = "sk-ant-plain-fedcba9876543210"
FILE_KEY = "sk-proj-file-00112233445566778899"


def test_the_engram_variable_wins_over_the_providers_own() -> None:
    keys = ApiKeys(
        {"ENGRAM_AUTHORING_ANTHROPIC_API_KEY": ENGRAM_KEY, "ANTHROPIC_API_KEY": PLAIN_KEY}
    )
    assert reveal_key(keys, "anthropic") == ENGRAM_KEY
    assert keys.source("anthropic") == "environment variable ENGRAM_AUTHORING_ANTHROPIC_API_KEY"
    assert not keys.configured("openai")


def test_the_providers_variable_is_used_when_the_engram_one_is_blank() -> None:
    keys = ApiKeys({"ENGRAM_AUTHORING_OPENAI_API_KEY": "  ", "OPENAI_API_KEY": f" {PLAIN_KEY}\n"})
    assert keys.configured("openai")
    assert reveal_key(keys, "openai") == PLAIN_KEY
    assert keys.source("openai") == "environment variable OPENAI_API_KEY"


def test_a_secret_file_is_read_and_stripped(tmp_path: Path) -> None:
    (tmp_path / "openai_api_key").write_text(FILE_KEY + "\n")
    keys = ApiKeys({}, tmp_path)
    assert keys.configured("openai")
    assert not keys.configured("anthropic")
    assert reveal_key(keys, "openai") == FILE_KEY
    assert keys.source("openai") == f"secret file {tmp_path / 'openai_api_key'}"


def test_the_environment_wins_over_the_secret_file(tmp_path: Path) -> None:
    (tmp_path / "anthropic_api_key").write_text(FILE_KEY)
    keys = ApiKeys({"ANTHROPIC_API_KEY": PLAIN_KEY}, tmp_path)
    assert reveal_key(keys, "anthropic") == PLAIN_KEY


def test_from_environ_reads_the_process_environment_when_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ENGRAM_AUTHORING_ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", PLAIN_KEY)
    keys = ApiKeys.from_environ()
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENGRAM_KEY)  # later changes are not seen
    assert reveal_key(keys, "anthropic") == PLAIN_KEY


def test_a_missing_key_names_what_to_set(tmp_path: Path) -> None:
    keys = ApiKeys({}, tmp_path)
    with pytest.raises(FailedPrecondition) as caught:
        reveal_key(keys, "anthropic")
    message = caught.value.message
    assert "ENGRAM_AUTHORING_ANTHROPIC_API_KEY" in message
    assert "ANTHROPIC_API_KEY" in message
    assert f"anthropic_api_key in {tmp_path}" in message


def test_an_empty_or_unreadable_secret_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "openai_api_key").write_text("\n")
    (tmp_path / "anthropic_api_key").mkdir()  # exists, but cannot be read as a file
    keys = ApiKeys({}, tmp_path)
    assert not keys.configured("openai")
    assert not keys.configured("anthropic")
    with pytest.raises(FailedPrecondition, match="is empty"):
        reveal_key(keys, "openai")
    with pytest.raises(FailedPrecondition, match="could not be read"):
        reveal_key(keys, "anthropic")


def test_keys_never_show_in_repr_str_logs_or_pickles(caplog: pytest.LogCaptureFixture) -> None:
    keys = ApiKeys({"ANTHROPIC_API_KEY": PLAIN_KEY, "OPENAI_API_KEY": FILE_KEY})
    caplog.set_level(logging.DEBUG)
    logging.getLogger("test").info("keys: %s %r", keys, keys)
    for shown in (repr(keys), str(keys), f"{keys}", caplog.text):
        assert PLAIN_KEY not in shown
        assert FILE_KEY not in shown
    assert "anthropic=environment variable ANTHROPIC_API_KEY" in repr(keys)
    with pytest.raises(TypeError):
        pickle.dumps(keys)
    assert not hasattr(keys, "__dict__")


def test_redact_masks_known_keys_and_key_shaped_tokens() -> None:
    keys = ApiKeys({"OPENAI_API_KEY": "custom-key-without-prefix-123"})
    text = "bad key custom-key-without-prefix-123; also sk-abcdefghijkl and Bearer abc.def.ghi"
    redacted = keys.redact(text)
    assert "custom-key-without-prefix-123" not in redacted
    assert "sk-abcdefghijkl" not in redacted
    assert "abc.def.ghi" not in redacted
    assert redacted.startswith("bad key [redacted]")


def test_only_known_providers_have_keys() -> None:
    with pytest.raises(InvalidInput, match="anthropic or openai"):
        ApiKeys({}).configured("mistral")


# ---------------------------------------------------------------- ProviderSpec, build_invoker


def test_an_unknown_invoker_names_the_valid_ones() -> None:
    with pytest.raises(InvalidInput) as caught:
        ProviderSpec(invoker="gemini")
    for name in INVOKER_NAMES:
        assert name in caught.value.message
    with pytest.raises(InvalidInput):
        default_model("gemini")


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"timeout_s": 0.0}, "timeout_s"),
        ({"timeout_s": float("nan")}, "timeout_s"),
        ({"max_output_tokens": 0}, "max_output_tokens"),
        ({"max_retries": -1}, "max_retries"),
        ({"model": "claude sonnet"}, "model"),
        ({"base_url": "api.anthropic.com"}, "base_url"),
    ],
)
def test_a_bad_spec_is_invalid_input(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        ProviderSpec(invoker="anthropic", **changes)  # type: ignore[arg-type]
    assert caught.value.field == field


async def _no_vectors(texts: list[str]) -> npt.NDArray[np.float32]:
    raise AssertionError("building an invoker embeds nothing")


def test_build_invoker_gives_each_named_invoker_without_needing_keys() -> None:
    keys = ApiKeys({})
    built = {
        name: build_invoker(ProviderSpec(invoker=name), keys, embed=_no_vectors)
        for name in INVOKER_NAMES
    }
    assert isinstance(built["extractive"], ExtractiveInvoker)
    assert isinstance(built["anthropic"], AnthropicInvoker)
    assert isinstance(built["openai"], OpenAIChatInvoker)
    assert isinstance(built["claude_code"], ClaudeCodeInvoker)
    assert isinstance(built["codex"], CodexInvoker)
    for name, invoker in built.items():
        assert invoker.name == name
        assert invoker.model == default_model(name)
    spec = ProviderSpec(invoker="openai", model="gpt-4.1")
    assert build_invoker(spec, keys, embed=_no_vectors).model == "gpt-4.1"
    assert [key_provider(n) for n in INVOKER_NAMES] == ["", "anthropic", "openai", "", ""]
