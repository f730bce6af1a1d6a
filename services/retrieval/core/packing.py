"""The context pack: the best drawers first, each under a compact provenance header, in a budget.

Pure: the caller ranks the candidates, supplies the token counter and the truncation, and maps
errors. The pack is the text an agent actually consumes, so its budget is counted on the very
text it gets.

Shape of the rendered pack (items joined by `separator`, a blank line by default):

    [decision · pinned · projects/engram · 2026-04-14 · sig: "two-phase commit"]
    The team chose two-phase commit for cross-store writes.

    [observation · active · projects/engram · 2026-03-03 · from session s-123 (14 raw chunks,
    2026-03-01..2026-03-03)]
    ...

Decisions:

- Honest counting. `tokens_used` equals `count_tokens(pack.text)` exactly, whatever the
  tokenizer does at item boundaries. The first pass prices each item as its own block count
  plus the separator's (one small count per candidate), then counts the finished text once;
  WordPiece splits at whitespace, so the two agree and the pack is done in milliseconds. If
  they disagree (a counter that merges across boundaries), a second pass counts the whole
  tentative text at every step, which is exact for any counter but costs one count of up to
  the budget per candidate.
- Greedy, best first, skipping. A candidate that does not fit is skipped and counted in
  `omitted`; a smaller, lower-ranked one may still fit after it. Ranking order is kept.
- Overflow of the first item. While the pack is still empty, a candidate that does not fit
  whole is cut (content truncated at a token boundary, marked with "…") to the longest prefix
  that fits, rather than returning an empty pack: the best drawer, even cut short, beats
  nothing, and the item's drawer_id lets the agent fetch the rest. If not even its header and
  the marker fit, it is omitted and the next candidate gets the same chance. Once the pack
  holds an item, nothing more is truncated: a cut later item would displace nothing and only
  add noise.
- Raw chunk ids never appear. Drawers derived from raw carry session descriptors (session id,
  raw chunk count, span); the agent expands a session on demand through the raw tools.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

# Marks content cut to fit the budget; one character so it costs at most a token or two.
TRUNCATION_MARK = "…"

# Sessions named in a header; the rest are summarised as "+N more". All of them stay in the
# item's structured `sessions`.
MAX_SESSIONS_IN_HEADER = 3

_FIELD_SEP = " · "


@dataclass(frozen=True)
class SessionInfo:
    """Session-level descriptor of the raw chunks a drawer was derived from."""

    session_id: str
    raw_chunk_count: int
    span_start: datetime | None
    span_end: datetime | None
    origin_kind: str = ""


@dataclass(frozen=True)
class PackCandidate:
    """One ranked drawer offered to the pack."""

    drawer_id: str
    content: str
    memory_type: str
    pin_status: str
    room: str
    date: datetime
    signature: str | None
    score: float
    sessions: Sequence[SessionInfo] = ()


@dataclass(frozen=True)
class PackItem:
    """A drawer as it appears in the pack.

    `tokens` counts this item's own block (header, newline, content) alone; the separators
    between blocks belong to the pack's `tokens_used`.
    """

    drawer_id: str
    header: str
    content: str
    score: float
    tokens: int
    sessions: tuple[SessionInfo, ...]
    truncated: bool = False


@dataclass(frozen=True)
class Pack:
    """The rendered pack; `tokens_used == count_tokens(text)` and `tokens_used <= token_budget`."""

    items: tuple[PackItem, ...]
    text: str
    tokens_used: int
    token_budget: int
    omitted: int


def _one_line(value: str) -> str:
    """`value` with every run of whitespace (newlines included) folded to one space."""
    return " ".join(value.split())


def _day(moment: datetime) -> str:
    # Aware datetimes are shown as their UTC day so one drawer reads the same to every agent;
    # naive ones are taken as already UTC.
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.date().isoformat()


def _span(session: SessionInfo) -> str:
    days = [_day(moment) for moment in (session.span_start, session.span_end) if moment]
    if not days:
        return ""
    if len(days) == 1 or days[0] == days[1]:
        return days[0]
    return f"{days[0]}..{days[1]}"


def _describe_session(session: SessionInfo) -> str:
    count = session.raw_chunk_count
    details = [f"{count} raw chunk{'' if count == 1 else 's'}"]
    span = _span(session)
    if span:
        details.append(span)
    return f"{_one_line(session.session_id)} ({', '.join(details)})"


def render_header(candidate: PackCandidate) -> str:
    """One-line provenance header: type, pin, room, date, signature, source sessions.

    Empty room and absent signature are left out rather than shown blank.
    """
    fields = [_one_line(candidate.memory_type), _one_line(candidate.pin_status)]
    if candidate.room.strip():
        fields.append(_one_line(candidate.room))
    fields.append(_day(candidate.date))
    if candidate.signature and candidate.signature.strip():
        signature = _one_line(candidate.signature).replace('"', "'")
        fields.append(f'sig: "{signature}"')
    sessions = list(candidate.sessions)
    if sessions:
        shown = ", ".join(_describe_session(s) for s in sessions[:MAX_SESSIONS_IN_HEADER])
        more = len(sessions) - MAX_SESSIONS_IN_HEADER
        noun = "session" if len(sessions) == 1 else "sessions"
        fields.append(f"from {noun} {shown}" + (f", +{more} more" if more > 0 else ""))
    return "[" + _FIELD_SEP.join(fields) + "]"


def render_block(header: str, content: str) -> str:
    """One item as it appears in the pack: its header line, then its content."""
    return f"{header}\n{content}"


def _join(text: str, block: str, separator: str) -> str:
    return f"{text}{separator}{block}" if text else block


def _fit_truncated(
    candidate: PackCandidate,
    header: str,
    *,
    token_budget: int,
    count_tokens: Callable[[str], int],
    truncate: Callable[[str, int], str],
) -> tuple[str, int] | None:
    """The longest cut of `candidate.content` whose block alone fits, with its token count.

    Binary search over the content's token length; the invariant is that `best` always holds
    a verified fit, so the answer fits even if the count is not monotone in the cut length.
    """

    def attempt(keep: int) -> tuple[str, int] | None:
        content = truncate(candidate.content, keep).rstrip() + TRUNCATION_MARK
        used = count_tokens(render_block(header, content))
        return (content, used) if used <= token_budget else None

    # Header and mark alone first: when even they do not fit (a budget below every header),
    # one count settles it instead of a whole search.
    best = attempt(0)
    low, high = 1, count_tokens(candidate.content)
    while best is not None and low <= high:
        keep = (low + high) // 2
        fit = attempt(keep)
        if fit is not None:
            best, low = fit, keep + 1
        else:
            high = keep - 1
    return best


def _greedy(
    candidates: Sequence[PackCandidate],
    *,
    token_budget: int,
    count_tokens: Callable[[str], int],
    truncate: Callable[[str, int], str],
    separator: str,
    additive: bool,
) -> Pack:
    """One greedy pass. `additive` prices a block as its own count plus the separator's, and
    leaves the caller to confirm against the whole text; otherwise every step counts the whole
    tentative text."""
    separator_tokens = count_tokens(separator) if additive else 0
    items: list[PackItem] = []
    text = ""
    tokens_used = 0
    omitted = 0
    for candidate in candidates:
        if tokens_used >= token_budget:
            omitted += 1
            continue
        header = render_header(candidate)
        block = render_block(header, candidate.content)
        tentative = _join(text, block, separator)
        if additive:
            block_tokens = count_tokens(block)
            used = tokens_used + block_tokens + (separator_tokens if items else 0)
        else:
            used = count_tokens(tentative)
        content, truncated = candidate.content, False
        if used > token_budget:
            cut = (
                None
                if items
                else _fit_truncated(
                    candidate,
                    header,
                    token_budget=token_budget,
                    count_tokens=count_tokens,
                    truncate=truncate,
                )
            )
            if cut is None:
                omitted += 1
                continue
            # The pack was empty, so the cut block alone is the whole text: its count is exact.
            content, used = cut
            truncated = True
            block = tentative = render_block(header, content)
            block_tokens = used
        elif not additive:
            block_tokens = used if not items else count_tokens(block)
        text, tokens_used = tentative, used
        items.append(
            PackItem(
                drawer_id=candidate.drawer_id,
                header=header,
                content=content,
                score=candidate.score,
                tokens=block_tokens,
                sessions=tuple(candidate.sessions),
                truncated=truncated,
            )
        )
    return Pack(
        items=tuple(items),
        text=text,
        tokens_used=tokens_used,
        token_budget=token_budget,
        omitted=omitted,
    )


def build_pack(
    candidates: Sequence[PackCandidate],
    *,
    token_budget: int,
    count_tokens: Callable[[str], int],
    truncate: Callable[[str, int], str],
    separator: str = "\n\n",
) -> Pack:
    """Pack `candidates` (ranked best first) into at most `token_budget` tokens.

    `count_tokens` counts a text; `truncate(text, n)` cuts it to at most `n` tokens at a token
    boundary (see `TokenCounter`). Raises ValueError for a budget that is not positive.
    """
    if token_budget <= 0:
        raise ValueError(f"token_budget must be a positive number of tokens; got {token_budget}")

    def greedy(additive: bool) -> Pack:
        return _greedy(
            candidates,
            token_budget=token_budget,
            count_tokens=count_tokens,
            truncate=truncate,
            separator=separator,
            additive=additive,
        )

    fast = greedy(additive=True)
    if (count_tokens(fast.text) if fast.text else 0) == fast.tokens_used:
        return fast
    # The counter is not additive over this text (a BPE merging across a boundary): redo the
    # pass counting the whole tentative text at every step.
    return greedy(additive=False)
