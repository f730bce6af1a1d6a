"""`ClaudeCodeInvoker` and `CodexInvoker`: an agent CLI run once per session.

Both write the authoring prompt, a blank line and the rendered session to the CLI's stdin
and read one answer back. Decisions:

- Claude Code: ``claude -p --output-format json [--model M]``. Print mode reads the prompt
  from stdin when none is given as an argument; the JSON envelope's ``result`` is the
  answer, and ``is_error: true`` (with exit status 0 or not) is a failed run.
- Codex: ``codex exec --skip-git-repo-check --sandbox read-only --ephemeral
  --output-last-message FILE [-m M] [-c model_reasoning_effort="E"] -``. ``-`` makes
  ``codex exec`` read the prompt from stdin; the final agent message is written to FILE
  (and printed to stdout, which is the fallback when FILE is missing or empty). Progress
  goes to stderr. Read-only sandbox and no session files: authoring needs neither edits
  nor a transcript. Flags as documented for ``codex exec`` (developers.openai.com/codex).
- Each run has a fresh empty temporary working directory, so a CLI does not read the
  tier's own files (CLAUDE.md, a git repository) as context.
- Authentication is the CLI's own (its login or its usual environment): the CLI inherits
  the tier's environment and no API key is injected. Claude Code's reasoning effort has
  no per-run flag, so it is ignored there; Codex takes it as a config override.
- Model "default" (Codex's `default_model`) or "" passes no model flag: the CLI's own
  configured model is used.
- Missing executable: `FailedPrecondition` ("install … or choose another invoker"). Over
  `timeout_s`: the CLI's whole process group is killed and `Unavailable` is raised.
  Non-zero exit: `Unavailable` with the tail of stderr, key-shaped tokens masked. CLIs are
  never retried here: a run is slow and may already have spent the operator's quota.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from services.authoring.core.invoker import ComposeInput, render_session
from services.authoring.invokers._errors import clip
from services.authoring.invokers._keys import ApiKeys, redact_all
from services.authoring.invokers._spec import CLAUDE_CODE, CLI_DEFAULT_MODEL, CODEX, ProviderSpec
from services.runtime.errors import FailedPrecondition, Unavailable

log = logging.getLogger(__name__)

_TAIL: Final = 600
_LAST_MESSAGE: Final = "last_message.txt"
_REAP_S: Final = 5.0


def cli_input(request: ComposeInput) -> str:
    """What a CLI reads on stdin: the authoring prompt, then the session."""
    return f"{request.prompt_text.rstrip()}\n\n{render_session(request)}\n"


class _CliInvoker:
    """Runs one CLI per `compose`; subclasses say how to call it and read its answer."""

    label: str = ""
    default_executable: str = ""
    install_hint: str = ""

    def __init__(
        self,
        spec: ProviderSpec,
        keys: ApiKeys | None = None,
        *,
        executable: str = "",
        extra_args: Sequence[str] = (),
    ) -> None:
        self.model = spec.resolved_model
        self._spec = spec
        self._keys = keys
        self._executable = executable or spec.executable or self.default_executable
        self._extra_args = tuple(extra_args)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r}, executable={self._executable!r})"

    @property
    def _model_flag_value(self) -> str:
        return "" if self.model == CLI_DEFAULT_MODEL else self.model

    def _resolve(self) -> str:
        found = shutil.which(self._executable)
        if found is None:
            raise FailedPrecondition(
                f"the {self.label} executable {self._executable!r} was not found; install "
                f"{self.install_hint}, set the invoker's executable path, or choose another "
                "invoker",
                field="executable",
            )
        return found

    def _argv(self, executable: str, workdir: Path) -> list[str]:
        raise NotImplementedError

    def _answer(self, stdout: str, workdir: Path) -> str:
        raise NotImplementedError

    async def compose(self, request: ComposeInput) -> str:
        """The CLI's final answer for `request`."""
        executable = self._resolve()
        with tempfile.TemporaryDirectory(prefix="engram-authoring-") as tmp:
            workdir = Path(tmp)
            argv = self._argv(executable, workdir)
            started = time.monotonic()
            code, stdout, stderr = await self._run(argv, cli_input(request), workdir)
            log.info(
                "%s compose: session %s, exit %s, %.2f s",
                self.label,
                request.session_id,
                code,
                time.monotonic() - started,
            )
            if code != 0:
                said = self._tail(stderr) or self._tail(stdout) or "no output"
                raise Unavailable(f"{self.label} exited with status {code}: {said}")
            return self._answer(stdout, workdir)

    def _tail(self, text: str) -> str:
        return clip(redact_all(text, self._keys), _TAIL)

    async def _run(self, argv: list[str], stdin: str, workdir: Path) -> tuple[int, str, str]:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=workdir,
                start_new_session=True,  # its own process group, so a timeout kills it all
            )
        except OSError as error:  # vanished after `which`, or not executable
            raise FailedPrecondition(
                f"the {self.label} executable {argv[0]!r} could not be started "
                f"({error.strerror}); install {self.install_hint} or choose another invoker",
                field="executable",
            ) from None
        try:
            out, err = await asyncio.wait_for(
                process.communicate(stdin.encode("utf-8")), timeout=self._spec.timeout_s
            )
        except (TimeoutError, asyncio.CancelledError) as error:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            # asyncio's wait() also waits for the pipes to close; a descendant that left the
            # group could hold them open, so the wait is bounded.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), _REAP_S)
            if isinstance(error, asyncio.CancelledError):
                raise
            raise Unavailable(
                f"{self.label} did not finish within {self._spec.timeout_s:g} s and was stopped"
            ) from None
        assert process.returncode is not None
        return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


class ClaudeCodeInvoker(_CliInvoker):
    """Composes drafts by running Claude Code in print mode."""

    label = "Claude Code"
    default_executable = "claude"
    install_hint = "Claude Code (npm install -g @anthropic-ai/claude-code) and log it in"

    def __init__(
        self,
        spec: ProviderSpec,
        keys: ApiKeys | None = None,
        *,
        executable: str = "",
        extra_args: Sequence[str] = (),
    ) -> None:
        super().__init__(spec, keys, executable=executable, extra_args=extra_args)
        self.name = CLAUDE_CODE

    def _argv(self, executable: str, workdir: Path) -> list[str]:
        argv = [executable, "-p", "--output-format", "json"]
        if self._model_flag_value:
            argv += ["--model", self._model_flag_value]
        return [*argv, *self._extra_args]

    def _answer(self, stdout: str, workdir: Path) -> str:
        try:
            envelope = json.loads(stdout)
        except json.JSONDecodeError:
            envelope = None
        if not isinstance(envelope, dict) or not isinstance(envelope.get("result"), str):
            raise Unavailable(
                f"{self.label} printed no JSON result envelope: {self._tail(stdout) or 'nothing'}"
            )
        if envelope.get("is_error"):
            kind = envelope.get("subtype") or "error"
            said = self._tail(envelope["result"]) or "no message"
            raise Unavailable(f"{self.label} reported a failed run ({kind}): {said}")
        return str(envelope["result"])


class CodexInvoker(_CliInvoker):
    """Composes drafts by running the Codex CLI non-interactively (`codex exec`)."""

    label = "Codex"
    default_executable = "codex"
    install_hint = "the Codex CLI (npm install -g @openai/codex) and log it in"

    def __init__(
        self,
        spec: ProviderSpec,
        keys: ApiKeys | None = None,
        *,
        executable: str = "",
        extra_args: Sequence[str] = (),
    ) -> None:
        super().__init__(spec, keys, executable=executable, extra_args=extra_args)
        self.name = CODEX

    def _argv(self, executable: str, workdir: Path) -> list[str]:
        argv = [executable, "exec", "--skip-git-repo-check", "--sandbox", "read-only"]
        argv += ["--ephemeral", "--output-last-message", str(workdir / _LAST_MESSAGE)]
        if self._model_flag_value:
            argv += ["-m", self._model_flag_value]
        if self._spec.reasoning_effort:
            argv += ["-c", f'model_reasoning_effort="{self._spec.reasoning_effort}"']
        return [*argv, *self._extra_args, "-"]

    def _answer(self, stdout: str, workdir: Path) -> str:
        try:
            last = (workdir / _LAST_MESSAGE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            last = ""
        return last if last.strip() else stdout
