"""audit_records: records one by one, each an input of its own, and reports that add up."""

from __future__ import annotations

import json

import pytest

from mcp_unknown_keys import Report, audit_file, audit_records

FS_TOOLS = [{"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}}}]


def transcript_line(n: int, arguments: dict, model: str = "claude-sonnet-4-5") -> dict:
    use = {"type": "tool_use", "id": f"toolu_{n}", "name": "mcp__fs__read_file", "input": arguments}
    return {"type": "assistant", "message": {"model": model, "content": [use]}}


def request_body(n: int, arguments: dict) -> str:
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"properties": {"q": {}}}}}]
    call = {"id": f"call_{n}", "type": "function", "function": {"name": "search", "arguments": json.dumps(arguments)}}
    return json.dumps({"model": "gpt-4o", "tools": tools, "messages": [{"role": "assistant", "tool_calls": [call]}]})


def records() -> list:
    return [
        transcript_line(1, {"path": "a", "ffset": 1}),
        transcript_line(2, {"path": "b", "ffset": 2}, model="o3"),
        request_body(3, {"q": "x", "limit": 5}).encode(),
        request_body(4, {"q": "y"}),
        "not JSON",
        transcript_line(5, {"path": "c"}),
    ]


def test_records_in_any_form_are_audited_as_the_lines_of_a_file(tmp_path):
    rows = records()
    report = audit_records(rows, FS_TOOLS, by=["model", "tool"])
    lines = [json.dumps(row) if isinstance(row, dict) else row.decode() if isinstance(row, bytes) else row for row in rows]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    from_file = audit_file(path, FS_TOOLS, by=["model", "tool"])
    assert report.coverage == from_file.coverage
    assert (report.coverage.calls, report.coverage.audited) == (5, 5)
    assert [(f["tool"], f["key"], f["calls"]) for f in report.findings] == [
        ("mcp__fs__read_file", "ffset", 2),
        ("search", "limit", 1),
    ]
    assert report.lines == {**from_file.lines, "read": 6} and report.lines["not_json"] == 1
    assert report.by("model", "tool") == from_file.by("model", "tool")
    assert report.notices == ["records:5: not JSON, counted as unreadable"]


def test_a_record_s_catalogue_serves_its_own_calls_only():
    listing = {"jsonrpc": "2.0", "id": 1, "result": {"tools": FS_TOOLS}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_file", "arguments": {"pth": "a"}}}
    # The listing and the call in one record: audited against it.
    together = audit_records([[listing, call]])
    assert together.coverage.audited == 1 and together.findings[0]["key"] == "pth"
    # In two records, the call meets no catalogue: rows are read in any order and partition.
    apart = audit_records([listing, call])
    assert (apart.coverage.audited, apart.coverage.unaudited) == (0, {"no_catalogue": 1})


def test_partitions_merge_into_the_one_run_report():
    rows = records()
    whole = audit_records(rows, FS_TOOLS, by=["key"])
    first, then = audit_records(rows[:3], FS_TOOLS, by=["key"]), audit_records(rows[3:], FS_TOOLS, by=["key"])
    assert first.merge(then) == whole == then.merge(first)
    # Each partition said `ffset` once; merged, it is said once.
    split = [audit_records([row], FS_TOOLS, by=["key"]) for row in rows]
    merged = split[0]
    for part in split[1:]:
        merged = merged.merge(part)
    assert merged == whole
    assert [(w.tool, w.unknown_keys) for w in merged.warnings] == [("mcp__fs__read_file", ["ffset"]), ("search", ["limit"])]
    assert merged.findings[0]["calls"] == 2
    assert whole != audit_records(rows[:3], FS_TOOLS, by=["key"])


def test_a_report_s_json_form_reads_back():
    report = audit_records(records(), FS_TOOLS, by=["model", "tool"])
    text = report.to_json()
    assert json.loads(text)["coverage"]["calls"] == 5
    back = Report.from_json(text)
    assert back == report and back.to_json() == text
    with pytest.raises(ValueError, match="not JSON"):
        Report.from_json("{")


def test_values_never_reach_the_report():
    report = audit_records([transcript_line(1, {"path": "secret-value-123", "ffset": "another-secret"})], FS_TOOLS)
    text = report.to_json() + repr(report.findings) + repr([w.to_json() for w in report.warnings])
    assert "secret" not in text


def test_bad_records_are_counted_or_refused_clearly():
    report = audit_records(["\ud800", b"\xff", None, 12])
    assert report.lines["not_utf8"] == 2
    with pytest.raises(TypeError):
        audit_records([object()])
    with pytest.raises(TypeError):
        audit_records(12)


def test_hostile_records_are_counted_not_a_crash():
    deep = "[" * 200_000 + "]" * 200_000
    arguments = '{"type":"tool_use","id":"1","name":"mcp__fs__read_file","input":' + "{\"a\":" * 100_000 + "1" + "}" * 100_001
    report = audit_records([deep, arguments, "{" * 50_000], FS_TOOLS)
    assert report.lines["read"] == 3
    assert report.unreadable_lines >= 1


def test_merging_many_reports_keeps_a_report_s_bounds():
    # 1,100 tools no catalogue lists, a report each: more groups than one grouping keeps.
    calls = [{"type": "tool_use", "id": f"t{n}", "name": f"tool_{n}", "input": {"a": 1}} for n in range(1100)]
    parts = [audit_records([call], FS_TOOLS) for call in calls]
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    groups = merged.by("tool")
    assert len(groups) <= 1001 and any(group["group"]["tool"] == "(other)" for group in groups)
    assert sum(group["calls"] for group in groups) == merged.coverage.calls == 1100
