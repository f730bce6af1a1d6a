"""The provider invokers against a real local far end.

The Anthropic and OpenAI invokers run the official SDKs unchanged; only the server is
local: a `ThreadingHTTPServer` on 127.0.0.1 that speaks the Messages and Chat Completions
wire formats, records every request, and answers what each test scripts. The CLI invokers
run small stand-in `claude` / `codex` programs written to tmp_path (external programs,
not Engram components) that record their argv, cwd and stdin.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from services.authoring.core import (
    ComposeChunk,
    ComposeInput,
    MalformedOutput,
    default_prompt,
    parse_output,
    render_session,
)
from services.authoring.invokers import ApiKeys, Invoker, ProviderSpec, build_invoker
from services.authoring.invokers.cli import cli_input
from services.runtime.errors import (
    EngramError,
    FailedPrecondition,
    InvalidInput,
    Overloaded,
    PermissionDenied,
    Unavailable,
)

ANTHROPIC_KEY = "sk-ant-test-4f1c2d3e5a6b7c8d9e0f"
OPENAI_KEY = "sk-proj-test-9a8b7c6d5e4f3a2b1c0d"
KEYS = ApiKeys({"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY})

REQUEST = ComposeInput(
    session_id="s-42",
    chunks=[
        ComposeChunk("c1", "The_Architect", "We decided the API returns 404 for missing drawers."),
        ComposeChunk("c2", "Kyle", "The retry loop crashed the worker when Redis restarted."),
    ],
    prompt_text=default_prompt("default").text,
    wings=("projects",),
    rooms=("projects/rev-engram",),
)
ANSWER = json.dumps(
    {
        "drawers": [
            {
                "content": "The Architect decided that the API returns 404 for missing drawers.",
                "memory_type": "decision",
                "wing": "projects",
                "room": "projects/rev-engram",
                "derived_from": ["c1"],
                "signature": "the API returns 404 for missing drawers",
            },
            {
                "content": "Kyle reported that the retry loop crashed the worker on a Redis "
                "restart.",
                "memory_type": "bug",
                "wing": "projects",
                "room": "projects/rev-engram",
                "derived_from": ["c2"],
            },
        ]
    }
)


async def _no_vectors(texts: list[str]) -> npt.NDArray[np.float32]:
    raise AssertionError("a provider invoker never embeds")


# ---------------------------------------------------------------- the local far end


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class FarEnd(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.seen: list[Seen] = []
        self.replies: list[Reply] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def script(self, *replies: Reply) -> None:
        """Answer with `replies` in order; the last one repeats (for the SDKs' retries)."""
        with self.lock:
            self.seen.clear()
            self.replies = list(replies)

    def next_reply(self, seen: Seen) -> Reply:
        with self.lock:
            self.seen.append(seen)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


class _Handler(BaseHTTPRequestHandler):
    server: FarEnd

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length", "0")))
        headers = {name.lower(): value for name, value in self.headers.items()}
        reply = self.server.next_reply(Seen(self.path, headers, json.loads(raw or b"null")))
        time.sleep(reply.delay_s)
        payload = json.dumps(reply.body).encode()
        try:
            self.send_response(reply.status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (the timeout test)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def far_end() -> Iterator[FarEnd]:
    server = FarEnd()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def anthropic_message(*blocks: dict[str, Any], stop_reason: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "content": list(blocks),
        "model": "claude-sonnet-5-5",
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 1200, "output_tokens": 180},
    }


def chat_completion(content: str | None, finish_reason: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-5.4-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 180, "total_tokens": 1380},
    }


def anthropic_error(status: int, kind: str, message: str) -> Reply:
    body = {"type": "error", "error": {"type": kind, "message": message}}
    return Reply(status, body, {"retry-after-ms": "1"})


def openai_error(status: int, message: str, code: str | None = None) -> Reply:
    body = {"error": {"message": message, "type": "invalid_request_error", "code": code}}
    return Reply(status, body, {"retry-after-ms": "1"})


def anthropic_spec(far_end: FarEnd, **changes: Any) -> ProviderSpec:
    return ProviderSpec(invoker="anthropic", base_url=far_end.url, max_retries=1, **changes)


def openai_spec(far_end: FarEnd, **changes: Any) -> ProviderSpec:
    return ProviderSpec(invoker="openai", base_url=f"{far_end.url}/v1", max_retries=1, **changes)


def sent_key(headers: dict[str, str]) -> str:
    """The Anthropic key as the SDK sent it: `x-api-key`, or (anthropic 2.x) a bearer token.

    anthropic 2.12 sends an `api_key` as `Authorization: Bearer`; earlier SDKs and the API
    reference use `x-api-key`. Either carries the key; exactly one must.
    """
    bearer = headers.get("authorization", "").removeprefix("Bearer ")
    carried = [k for k in (headers.get("x-api-key", ""), bearer) if k]
    assert len(carried) == 1, headers.keys()
    return carried[0]


def assert_hidden(caplog: pytest.LogCaptureFixture, *shown: object) -> None:
    """Neither key appears in the logs or in anything the test was shown."""
    texts = [caplog.text, *(repr(s) for s in shown), *(str(s) for s in shown)]
    for error in shown:
        if isinstance(error, EngramError):
            texts.append(error.message)
    for text in texts:
        assert ANTHROPIC_KEY not in text
        assert OPENAI_KEY not in text


@pytest.fixture(autouse=True)
def _debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # the SDKs log requests at DEBUG: keys must not be there


# ---------------------------------------------------------------- Anthropic


async def test_anthropic_sends_the_messages_request_and_returns_the_text(
    far_end: FarEnd, caplog: pytest.LogCaptureFixture
) -> None:
    half = len(ANSWER) // 2
    far_end.script(
        Reply(
            200,
            anthropic_message(
                {"type": "thinking", "thinking": "Two claims here.", "signature": "sig"},
                {"type": "text", "text": ANSWER[:half]},
                {"type": "text", "text": ANSWER[half:]},
            ),
        )
    )
    invoker = build_invoker(
        anthropic_spec(far_end, max_output_tokens=4000), KEYS, embed=_no_vectors
    )
    assert isinstance(invoker, Invoker)
    text = await invoker.compose(REQUEST)

    assert text == ANSWER
    [seen] = far_end.seen
    assert seen.path == "/v1/messages"
    assert sent_key(seen.headers) == ANTHROPIC_KEY
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", seen.headers["anthropic-version"])  # SDK's pin
    assert seen.body["model"] == "claude-sonnet-5-5" == invoker.model
    assert seen.body["max_tokens"] == 4000
    assert seen.body["system"] == REQUEST.prompt_text
    assert seen.body["messages"] == [{"role": "user", "content": render_session(REQUEST)}]
    assert "output_config" not in seen.body
    assert "thinking" not in seen.body

    parsed = parse_output(text, mode="default", chunk_ids={"c1", "c2"})
    assert parsed.problems == []
    assert [(d.memory_type, d.derived_from) for d in parsed.drafts] == [
        ("decision", ("c1",)),
        ("bug", ("c2",)),
    ]
    assert parsed.drafts[0].signature == "the API returns 404 for missing drawers"
    assert_hidden(caplog, invoker)


async def test_anthropic_sends_the_reasoning_effort_when_set(far_end: FarEnd) -> None:
    far_end.script(Reply(200, anthropic_message({"type": "text", "text": ANSWER})))
    spec = anthropic_spec(far_end, model="claude-opus-4-5", reasoning_effort="high")
    assert await build_invoker(spec, KEYS, embed=_no_vectors).compose(REQUEST) == ANSWER
    assert far_end.seen[0].body["output_config"] == {"effort": "high"}
    assert far_end.seen[0].body["model"] == "claude-opus-4-5"


@pytest.mark.parametrize(
    ("reply", "error_type", "words", "attempts"),
    [
        (
            anthropic_error(401, "authentication_error", f"invalid x-api-key {ANTHROPIC_KEY}"),
            FailedPrecondition,
            "the Anthropic API key was refused",
            1,
        ),
        (
            anthropic_error(403, "permission_error", "not allowed to use this model"),
            PermissionDenied,
            "not allowed to use this model",
            1,
        ),
        (anthropic_error(429, "rate_limit_error", "slow down"), Overloaded, "slow down", 2),
        (anthropic_error(529, "overloaded_error", "Overloaded"), Overloaded, "Overloaded", 2),
        (anthropic_error(500, "api_error", "Internal error"), Unavailable, "Internal error", 2),
        (
            anthropic_error(400, "invalid_request_error", "model: claude-nope not found"),
            InvalidInput,
            "model: claude-nope not found",
            1,
        ),
    ],
)
async def test_anthropic_errors_are_mapped(
    far_end: FarEnd,
    caplog: pytest.LogCaptureFixture,
    reply: Reply,
    error_type: type[EngramError],
    words: str,
    attempts: int,
) -> None:
    far_end.script(reply)
    invoker = build_invoker(anthropic_spec(far_end), KEYS, embed=_no_vectors)
    with pytest.raises(EngramError) as caught:
        await invoker.compose(REQUEST)
    assert type(caught.value) is error_type
    assert words in caught.value.message
    assert len(far_end.seen) == attempts  # max_retries=1: retried once when retryable
    assert_hidden(caplog, caught.value, invoker)


async def test_anthropic_output_cut_at_max_tokens_says_so(far_end: FarEnd) -> None:
    cut = anthropic_message({"type": "text", "text": ANSWER[:40]}, stop_reason="max_tokens")
    far_end.script(Reply(200, cut))
    with pytest.raises(MalformedOutput, match=r"max_output_tokens limit \(64\)"):
        await build_invoker(
            anthropic_spec(far_end, max_output_tokens=64), KEYS, embed=_no_vectors
        ).compose(REQUEST)


async def test_a_missing_key_fails_before_any_request(far_end: FarEnd) -> None:
    far_end.script(Reply(200, anthropic_message({"type": "text", "text": ANSWER})))
    for spec in (anthropic_spec(far_end), openai_spec(far_end)):
        invoker = build_invoker(spec, ApiKeys({}), embed=_no_vectors)
        with pytest.raises(FailedPrecondition, match=f"{spec.invoker.upper()}_API_KEY"):
            await invoker.compose(REQUEST)
    assert far_end.seen == []


async def test_an_unreachable_api_is_unavailable(caplog: pytest.LogCaptureFixture) -> None:
    closed = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    url = f"http://127.0.0.1:{closed.server_address[1]}"
    closed.server_close()  # nothing listens there now
    for spec in (
        ProviderSpec(invoker="anthropic", base_url=url, max_retries=0),
        ProviderSpec(invoker="openai", base_url=f"{url}/v1", max_retries=0),
    ):
        with pytest.raises(Unavailable, match="could not be reached") as caught:
            await build_invoker(spec, KEYS, embed=_no_vectors).compose(REQUEST)
        assert_hidden(caplog, caught.value)


async def test_a_slow_api_times_out_as_unavailable(far_end: FarEnd) -> None:
    far_end.script(Reply(200, anthropic_message({"type": "text", "text": ANSWER}), delay_s=2.0))
    spec = ProviderSpec(invoker="anthropic", base_url=far_end.url, max_retries=0, timeout_s=0.3)
    started = time.monotonic()
    with pytest.raises(Unavailable, match=r"did not answer within 0\.3 s"):
        await build_invoker(spec, KEYS, embed=_no_vectors).compose(REQUEST)
    assert time.monotonic() - started < 1.5


# ---------------------------------------------------------------- OpenAI


async def test_openai_sends_the_chat_request_and_returns_the_content(
    far_end: FarEnd, caplog: pytest.LogCaptureFixture
) -> None:
    far_end.script(Reply(200, chat_completion(ANSWER)))
    invoker = build_invoker(openai_spec(far_end, reasoning_effort="low"), KEYS, embed=_no_vectors)
    text = await invoker.compose(REQUEST)

    assert text == ANSWER
    [seen] = far_end.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {OPENAI_KEY}"
    assert seen.body["model"] == "gpt-5.4-mini" == invoker.model
    assert seen.body["messages"] == [
        {"role": "system", "content": REQUEST.prompt_text},
        {"role": "user", "content": render_session(REQUEST)},
    ]
    assert seen.body["response_format"] == {"type": "json_object"}
    assert seen.body["max_completion_tokens"] == 8192
    assert seen.body["reasoning_effort"] == "low"
    parsed = parse_output(text, mode="default", chunk_ids={"c1", "c2"})
    assert [d.memory_type for d in parsed.drafts] == ["decision", "bug"]
    assert_hidden(caplog, invoker)


async def test_openai_leaves_out_the_effort_when_unset(far_end: FarEnd) -> None:
    far_end.script(Reply(200, chat_completion(ANSWER)))
    await build_invoker(openai_spec(far_end, model="gpt-4.1"), KEYS, embed=_no_vectors).compose(
        REQUEST
    )
    assert "reasoning_effort" not in far_end.seen[0].body
    assert far_end.seen[0].body["model"] == "gpt-4.1"


@pytest.mark.parametrize(
    ("reply", "error_type", "words", "attempts"),
    [
        (
            openai_error(401, f"Incorrect API key provided: {OPENAI_KEY}", "invalid_api_key"),
            FailedPrecondition,
            "the OpenAI API key was refused",
            1,
        ),
        (openai_error(429, "Rate limit reached", "rate_limit_exceeded"), Overloaded, "Rate", 2),
        (
            openai_error(429, "You exceeded your current quota", "insufficient_quota"),
            FailedPrecondition,
            "billing",
            2,
        ),
        (openai_error(500, "The server had an error"), Unavailable, "server had an error", 2),
        (
            openai_error(400, "Unsupported parameter: 'reasoning_effort'"),
            InvalidInput,
            "Unsupported parameter: 'reasoning_effort'",
            1,
        ),
    ],
)
async def test_openai_errors_are_mapped(
    far_end: FarEnd,
    caplog: pytest.LogCaptureFixture,
    reply: Reply,
    error_type: type[EngramError],
    words: str,
    attempts: int,
) -> None:
    far_end.script(reply)
    invoker = build_invoker(openai_spec(far_end), KEYS, embed=_no_vectors)
    with pytest.raises(EngramError) as caught:
        await invoker.compose(REQUEST)
    assert type(caught.value) is error_type
    assert words in caught.value.message
    assert len(far_end.seen) == attempts
    assert_hidden(caplog, caught.value, invoker)


async def test_openai_length_finish_says_so(far_end: FarEnd) -> None:
    far_end.script(Reply(200, chat_completion(ANSWER[:30], finish_reason="length")))
    with pytest.raises(MalformedOutput, match="max_output_tokens"):
        await build_invoker(openai_spec(far_end), KEYS, embed=_no_vectors).compose(REQUEST)


# ---------------------------------------------------------------- CLIs


def fake_cli(directory: Path, name: str, body: str) -> Path:
    """An executable stand-in for a CLI: records argv, cwd and stdin, then runs `body`."""
    log = directory / f"{name}.calls.json"
    script = directory / name
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, sys, time\n"
        "stdin = sys.stdin.read()\n"
        f"with open({str(log)!r}, 'w') as f:\n"
        "    json.dump({'argv': sys.argv[1:], 'cwd': os.getcwd(), 'stdin': stdin,\n"
        "               'pid': os.getpid()}, f)\n"
        f"{body}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def _exists(path: str) -> bool:
    return Path(path).exists()


def calls(script: Path) -> dict[str, Any]:
    return dict(json.loads(script.with_name(f"{script.name}.calls.json").read_text()))


def cli_spec(invoker: str, script: Path, **changes: Any) -> ProviderSpec:
    return ProviderSpec(invoker=invoker, executable=str(script), **changes)


async def test_claude_code_reads_the_result_envelope(tmp_path: Path) -> None:
    envelope = {"type": "result", "subtype": "success", "is_error": False, "result": ANSWER}
    script = fake_cli(tmp_path, "claude", f"print(json.dumps({envelope!r}))")
    invoker = build_invoker(cli_spec("claude_code", script), KEYS, embed=_no_vectors)
    text = await invoker.compose(REQUEST)

    assert text == ANSWER
    assert len(parse_output(text, mode="default").drafts) == 2
    call = calls(script)
    assert call["argv"] == ["-p", "--output-format", "json", "--model", "sonnet"]
    assert call["stdin"] == cli_input(REQUEST)
    assert call["stdin"].startswith(REQUEST.prompt_text.rstrip())
    assert render_session(REQUEST) in call["stdin"]
    assert Path(call["cwd"]).name.startswith("engram-authoring-")
    assert not _exists(call["cwd"])  # a fresh directory per run, removed after


async def test_claude_code_error_envelope_is_unavailable(tmp_path: Path) -> None:
    envelope = {"type": "result", "subtype": "error_during_execution", "is_error": True}
    envelope["result"] = "Invalid API key · Please run /login"
    script = fake_cli(tmp_path, "claude", f"print(json.dumps({envelope!r}))")
    with pytest.raises(Unavailable, match=r"failed run \(error_during_execution\).*run /login"):
        await build_invoker(cli_spec("claude_code", script), KEYS, embed=_no_vectors).compose(
            REQUEST
        )


async def test_claude_code_without_an_envelope_is_unavailable(tmp_path: Path) -> None:
    script = fake_cli(tmp_path, "claude", "print('hello, not json')")
    with pytest.raises(Unavailable, match="no JSON result envelope: hello, not json"):
        await build_invoker(cli_spec("claude_code", script), KEYS, embed=_no_vectors).compose(
            REQUEST
        )


async def test_codex_reads_the_last_message_file(tmp_path: Path) -> None:
    body = (
        "path = sys.argv[sys.argv.index('--output-last-message') + 1]\n"
        f"open(path, 'w').write({ANSWER!r})\n"
        "print('progress noise on stdout')"
    )
    script = fake_cli(tmp_path, "codex", body)
    spec = cli_spec("codex", script, model="gpt-5-codex", reasoning_effort="medium")
    invoker = build_invoker(spec, KEYS, embed=_no_vectors)
    assert invoker.name == "codex"
    assert await invoker.compose(REQUEST) == ANSWER
    call = calls(script)
    argv = call["argv"]
    assert argv[:5] == ["exec", "--skip-git-repo-check", "--sandbox", "read-only", "--ephemeral"]
    assert argv[argv.index("-m") + 1] == "gpt-5-codex"
    assert argv[argv.index("-c") + 1] == 'model_reasoning_effort="medium"'
    assert argv[-1] == "-"
    assert Path(argv[argv.index("--output-last-message") + 1]).parent == Path(call["cwd"])
    assert call["stdin"] == cli_input(REQUEST)


async def test_codex_falls_back_to_stdout_and_its_default_model(tmp_path: Path) -> None:
    script = fake_cli(tmp_path, "codex", f"print({ANSWER!r})")
    invoker = build_invoker(cli_spec("codex", script), KEYS, embed=_no_vectors)
    assert (await invoker.compose(REQUEST)).strip() == ANSWER
    argv = calls(script)["argv"]
    assert "-m" not in argv  # "default": the CLI's own configured model
    assert "-c" not in argv


@pytest.mark.parametrize("name", ["claude_code", "codex"])
async def test_a_failing_cli_is_unavailable_with_its_stderr_tail(
    tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    body = (
        "print('starting', file=sys.stderr)\n"
        f"print('auth failed for key {OPENAI_KEY}: token expired', file=sys.stderr)\n"
        "sys.exit(3)"
    )
    script = fake_cli(tmp_path, name, body)
    with pytest.raises(Unavailable, match="exited with status 3") as caught:
        await build_invoker(cli_spec(name, script), KEYS, embed=_no_vectors).compose(REQUEST)
    assert "token expired" in caught.value.message
    assert "[redacted]" in caught.value.message
    assert_hidden(caplog, caught.value)


def _gone(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status  # killed, waiting for its (re)parent to reap it


async def test_a_cli_over_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    body = (
        "import subprocess\n"
        "child = subprocess.Popen(['sleep', '30'])\n"
        f"open({str(tmp_path / 'child.pid')!r}, 'w').write(str(child.pid))\n"
        "time.sleep(30)"
    )
    script = fake_cli(tmp_path, "claude", body)
    spec = cli_spec("claude_code", script, timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(Unavailable, match=r"did not finish within 1 s"):
        await build_invoker(spec, KEYS, embed=_no_vectors).compose(REQUEST)
    assert time.monotonic() - started < 5
    pids = [calls(script)["pid"], int((tmp_path / "child.pid").read_text())]
    for _ in range(60):  # killed at once; give the kernel a moment to show it
        if all(_gone(pid) for pid in pids):
            break
        await asyncio.sleep(0.05)
    assert all(_gone(pid) for pid in pids)


@pytest.mark.parametrize("name", ["claude_code", "codex"])
async def test_a_missing_cli_is_a_failed_precondition(tmp_path: Path, name: str) -> None:
    spec = cli_spec(name, tmp_path / "not-installed")
    with pytest.raises(FailedPrecondition, match=r"was not found; install .* another invoker"):
        await build_invoker(spec, KEYS, embed=_no_vectors).compose(REQUEST)
    not_executable = tmp_path / "plain-file"
    not_executable.write_text("#!/bin/sh\n")
    with pytest.raises(FailedPrecondition, match="install"):
        await build_invoker(cli_spec(name, not_executable), KEYS, embed=_no_vectors).compose(
            REQUEST
        )


def test_the_process_environment_is_not_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert not os.environ.get("ANTHROPIC_API_KEY")
    assert KEYS.configured("anthropic") and KEYS.configured("openai")
