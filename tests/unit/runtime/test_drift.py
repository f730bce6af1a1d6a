"""The pure parts of `engram doctor`: comparing a derived table with its source, finding
dangling links, and the findings' shape and wording."""

from __future__ import annotations

from engram.v1 import common_pb2, gateway_pb2

from services.cli.doctor import left_over, render
from services.runtime.drift import EXAMPLES, Drift, compare_rows, dangling_links, found, store_check


def test_compare_rows_sorts_missing_orphans_and_stale() -> None:
    rows = compare_rows({"a": 1, "b": 2, "c": 3}, {"b": 2, "c": 4, "z": 9})
    assert (rows.missing, rows.orphans, rows.stale) == (["a"], ["z"], ["c"])
    assert not compare_rows({"a": 1}, {"a": 1}), "agreeing tables are no drift"


def test_dangling_links_name_each_missing_end() -> None:
    links = [("l1", "a", "b"), ("l2", "b", "gone"), ("l3", "gone", "also-gone")]
    assert dangling_links(links, {"a", "b"}) == {"gone": ["l2", "l3"], "also-gone": ["l3"]}


def test_found_is_empty_for_nothing_and_caps_examples() -> None:
    assert found("part", "problem", [], "remedy", repaired=False) == []
    [drift] = found("part", "problem", [f"id-{i}" for i in range(9)], "remedy", repaired=True)
    message = drift.to_proto()
    assert message.count == 9 and len(message.examples) == EXAMPLES and message.repaired
    whole = Drift("part", "index broken", (), "rebuild", count=1).to_proto()
    assert whole.count == 1 and not whole.examples


def _report(*drifts: common_pb2.StoreDrift) -> gateway_pb2.StoreDoctorReport:
    check = store_check("retrieval", 12, ["a ↔ b"], [])
    check.drift.extend(drifts)
    return gateway_pb2.StoreDoctorReport(
        store="s",
        checks=[check],
        drift=sum(d.count for d in drifts),
        repaired=sum(d.count for d in drifts if d.repaired),
    )


def test_render_says_what_is_left_to_do() -> None:
    clean = _report()
    assert "✓ every part agrees" in render(clean, repair=False) and left_over(clean) == 0
    drift = Drift("a ↔ b", "rows missing", ("x", "y"), "write them").to_proto()
    found_only = render(_report(drift), repair=False)
    assert "✗ a ↔ b: 2 rows missing (e.g. x, y)" in found_only
    assert "to repair: write them" in found_only and "`engram doctor --repair`" in found_only
    drift.repaired = True
    mended = _report(drift)
    assert "all repaired" in render(mended, repair=True) and left_over(mended) == 0
    stuck = Drift("a ↔ b", "unreadable", ("z",), "none automatic").to_proto()
    assert left_over(_report(drift, stuck)) == 1
    assert "NOT repaired: none automatic" in render(_report(drift, stuck), repair=True)
