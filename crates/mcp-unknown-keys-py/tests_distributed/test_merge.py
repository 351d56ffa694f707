"""Reports add up: random partitions of real samples, merged in any order, give the one-run report."""

from __future__ import annotations

import functools
import json
import random

import pytest
from corpus import corpus, declarations, fixture_records

from mcp_unknown_keys import Report, audit_records

BY = ["model", "tool"]


def records(shapes: tuple[str, ...] = ("fixtures", "exchanges", "spans")) -> list[str]:
    """The real samples and generated records, shuffled.

    Every tool keeps one name across them: a tool called under two names
    (`mcp__fs__read_file` in transcripts, `read_file` in request bodies) is
    said once under the name read first, and the other name's calls are
    counted undiagnosed, so its causes depend on the order, in one run as
    in partitions (docs/distributed.md).
    """
    mixed = fixture_records() if "fixtures" in shapes else []
    shapes = tuple(shape for shape in shapes if shape != "fixtures")
    for seed, shape in enumerate(shapes):
        mixed += corpus(shape, 150, seed)
    random.Random(7).shuffle(mixed)
    return mixed


def partitions(rng: random.Random, rows: list[str]) -> list[list[str]]:
    """`rows` shuffled and cut at random places, empty parts included."""
    rows = rows[:]
    rng.shuffle(rows)
    cuts = sorted(rng.randint(0, len(rows)) for _ in range(rng.randint(0, 12)))
    return [rows[a:b] for a, b in zip([0, *cuts], [*cuts, len(rows)])]


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("shapes", [("fixtures", "exchanges", "spans"), ("transcript",)])
def test_random_partitions_merged_in_any_order_equal_one_run(seed: int, shapes: tuple[str, ...]) -> None:
    rows = records(shapes)
    tools = declarations()
    whole = audit_records(rows, tools, by=BY)
    assert whole.coverage.calls >= 150 and whole.findings, "the samples hold calls and findings"
    rng = random.Random(seed)
    parts = [audit_records(part, tools, by=BY) for part in partitions(rng, rows)]
    rng.shuffle(parts)
    merged = functools.reduce(Report.merge, parts, audit_records([], tools, by=BY))
    assert merged == whole
    # Associativity: a tree of merges gives the same as a fold.
    while len(parts) > 1:
        parts = [a.merge(b) for a, b in zip(parts[::2], parts[1::2])] + (parts[-1:] if len(parts) % 2 else [])
    assert parts[0] == whole
    # Each pair said once across the partitions, as one run says it.
    said = [(w.tool, key) for w in merged.warnings for key in w.unknown_keys + w.unknown_paths]
    assert len(said) == len(set(said))
    assert sorted(said) == sorted((w.tool, k) for w in whole.warnings for k in w.unknown_keys + w.unknown_paths)


def test_a_merge_is_commutative_and_the_sum_of_its_parts() -> None:
    rows = records()
    a = audit_records(rows[: len(rows) // 3], declarations(), by=BY)
    b = audit_records(rows[len(rows) // 3 :], declarations(), by=BY)
    assert a.merge(b) == b.merge(a)
    merged = a.merge(b)
    assert merged.coverage.calls == a.coverage.calls + b.coverage.calls
    assert merged.lines["read"] == a.lines["read"] + b.lines["read"]
    calls = {(f["tool"], f["key"]): f["calls"] for f in merged.findings}
    for part in (a, b):
        for finding in part.findings:
            assert calls[(finding["tool"], finding["key"])] >= finding["calls"]
    by_model = {g["group"]["model"]: g["calls"] for g in merged.by("model", "tool")}
    assert sum(g["calls"] for g in merged.by("model")) == merged.coverage.calls
    assert by_model


def test_a_report_goes_to_json_and_back_unchanged() -> None:
    report = audit_records(records(), declarations(), by=BY)
    back = Report.from_json(report.to_json())
    assert back == report
    assert back.to_json() == report.to_json()
    assert [w.to_json() for w in back.warnings] == [w.to_json() for w in report.warnings]
    assert back.notices == report.notices and back.by("model", "tool") == report.by("model", "tool")


def test_reports_grouped_differently_do_not_merge() -> None:
    a = audit_records([], by=["model", "tool"])
    b = audit_records([], by=["key"])
    with pytest.raises(ValueError, match="grouped differently"):
        a.merge(b)


@pytest.mark.parametrize(
    "text, why",
    [
        ("not json", "not JSON"),
        ("[]", "JSON object"),
        ('{"warnings": []}', "report"),
        (json.dumps({"report": 1, "warnings": [], "coverage": {"calls": 0, "audited": 0}}), "JSON form has `lines`"),
    ],
)
def test_text_that_is_no_report_is_a_clear_error(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        Report.from_json(text)
