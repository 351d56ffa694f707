"""audit_file: the audit command's reader of recorded logs, from Python."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import Recorded, framework

from mcp_unknown_keys import Auditor, audit_file

FS_TOOLS = [{"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}}}]
SEARCH = {"name": "search", "inputSchema": {"properties": {"q": {}}}}


def claude_code_line(tool_id: str, arguments: dict) -> str:
    use = {"type": "tool_use", "id": tool_id, "name": "mcp__fs__read_file", "input": arguments}
    return json.dumps({"type": "assistant", "message": {"content": [use]}})


def recording() -> list[str]:
    return [
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [SEARCH]}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "search", "arguments": {"q": "x", "limit": 5}}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "fetch", "arguments": {"url": "u"}}}),
        "not JSON",
    ]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_transcript_is_audited_against_the_tools_given(tmp_path):
    session = write(tmp_path / "session.jsonl", [claude_code_line("toolu_1", {"path": "notes.txt", "ffset": 12})])
    catalogue = tmp_path / "fs-tools.json"
    catalogue.write_text(json.dumps(FS_TOOLS))
    mcp_types = framework("mcp.types", "mcp")
    listing = mcp_types.ListToolsResult(tools=[mcp_types.Tool(**tool) for tool in FS_TOOLS])
    for tools in (FS_TOOLS, tuple(FS_TOOLS), {"tools": FS_TOOLS}, listing, catalogue, str(catalogue)):
        report = audit_file(session, tools)
        [warning] = report.warnings
        assert (warning.tool, warning.unknown_keys, warning.id) == ("mcp__fs__read_file", ["ffset"], "toolu_1")
        assert warning.hints[0]["suggestion"] == "offset"
        assert (report.coverage.calls, report.coverage.audited) == (1, 1)
        assert report.is_complete


def test_a_recording_brings_its_own_listing_and_every_call_is_counted(tmp_path):
    report = audit_file(write(tmp_path / "traffic.jsonl", recording()))
    [warning] = report.warnings
    assert (warning.tool, warning.unknown_keys, warning.id) == ("search", ["limit"], "2")
    coverage = report.coverage
    assert (coverage.calls, coverage.audited) == (2, 1)
    assert coverage.unaudited == {"unlisted_tool": 1}
    assert coverage.unlisted_tools == {"fetch": 1}


def test_the_file_and_the_auditor_say_the_same_warning(tmp_path):
    [from_file] = audit_file(write(tmp_path / "traffic.jsonl", recording())).warnings
    auditor = Auditor(on_warn=Recorded())
    auditor.replace_catalog([SEARCH])
    assert auditor.audit("search", {"q": "x", "limit": 5}, id=2) == from_file


def test_files_are_read_in_order_each_pair_said_once_compressed_or_not(tmp_path):
    plain = write(tmp_path / "a.jsonl", recording())
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(gzip.compress(("\n".join(recording()) + "\n").encode()))
    report = audit_file([plain, str(packed)])
    assert [w.unknown_keys for w in report.warnings] == [["limit"]]
    assert (report.coverage.calls, report.coverage.audited) == (4, 2)
    assert report.unreadable_lines == 2


def test_allow_and_top_level_only_are_the_commands_options(tmp_path):
    traffic = write(tmp_path / "traffic.jsonl", recording())
    report = audit_file(traffic, allow=["limit"])
    assert report.warnings == [] and report.coverage.audited == 1
    nested = {"name": "search", "inputSchema": {"properties": {"q": {"properties": {"text": {}}}}}}
    call = {"q": {"text": "x", "lang": "en"}}
    session = write(tmp_path / "nested.jsonl", [
        json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"tools": [nested]}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": call}}),
    ])
    assert [w.unknown_paths for w in audit_file(session).warnings] == [["q.lang"]]
    assert audit_file(session, top_level_only=True).warnings == []


def test_lines_that_cannot_be_read_are_counted_and_named(tmp_path):
    traffic = tmp_path / "traffic.jsonl"
    lines = [line.encode() for line in recording()] + [b'{"jsonrpc": "2.0", "id": 9, "method": "\xc3\x28"}']
    traffic.write_bytes(b"\n".join(lines) + b"\n")
    report = audit_file(traffic)
    assert report.lines == {"read": 6, "not_json": 1, "not_utf8": 1, "too_deep": 0, "too_long": 0, "idle": 0}
    assert report.unreadable_lines == 2
    assert [n for n in report.notices if "unreadable" in n] == [
        f"{traffic}:5: not JSON, counted as unreadable",
        f"{traffic}:6: not UTF-8, counted as unreadable",
    ]
    assert not report.is_complete
    assert "unreadable_lines=2" in repr(report)


def test_a_document_cut_short_keeps_what_came_before_the_cut(tmp_path):
    # A transcript saved as one JSON array, its end lost: the call before the
    # cut is audited, the cut is said and counted, and nothing claims it whole.
    calls = [claude_code_line(f"toolu_{i}", {"path": "a", "ffset": i}) for i in range(2)]
    whole = "[" + ",".join(calls) + "]"
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: len(whole) - len(calls[1]) // 2])
    report = audit_file(cut, FS_TOOLS)
    assert report.coverage.calls == 1
    assert [w.unknown_keys for w in report.warnings] == [["ffset"]]
    assert report.incomplete_inputs == 1
    assert any("cut short" in notice for notice in report.notices), report.notices
    assert not report.is_complete


def test_what_cannot_be_read_is_an_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        audit_file(tmp_path / "missing.jsonl")
    with pytest.raises(FileNotFoundError, match="missing.jsonl"):
        audit_file([write(tmp_path / "present.jsonl", recording()), str(tmp_path / "missing.jsonl")])
    with pytest.raises(IsADirectoryError):
        audit_file(tmp_path)
    session = write(tmp_path / "session.jsonl", recording())
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    with pytest.raises(ValueError, match="holds no readable tool"):
        audit_file(session, empty)
    with pytest.raises(TypeError):
        audit_file(session, 12)


def test_tools_is_a_path_or_the_declarations_and_nothing_else(tmp_path):
    session = write(tmp_path / "session.jsonl", [claude_code_line("toolu_1", {"path": "a", "ffset": 1})])
    # A str is a path, never JSON text: text that is no file is refused, saying what to pass.
    with pytest.raises(TypeError, match=r"looks like JSON text: pass the declarations themselves"):
        audit_file(session, json.dumps(FS_TOOLS))
    with pytest.raises(FileNotFoundError, match="fs-tools.json"):
        audit_file(session, str(tmp_path / "fs-tools.json"))
    not_tools = (json.dumps(FS_TOOLS).encode(), bytearray(b"[]"), 12, set(), (tool for tool in FS_TOOLS))
    for tools in not_tools:
        with pytest.raises(TypeError, match=r"tools must be a path .* or the declarations .*, not \w+"):
            audit_file(session, tools)


def model_line(model: str, tool_id: str, arguments: dict) -> str:
    use = {"type": "tool_use", "id": tool_id, "name": "mcp__fs__read_file", "input": arguments}
    return json.dumps({"type": "assistant", "message": {"model": model, "content": [use]}})


def test_report_by_groups_the_calls_as_the_command_does(tmp_path):
    session = write(tmp_path / "session.jsonl", [
        model_line("claude-opus-4", "t1", {"path": "a", "ffset": 1}),
        model_line("claude-opus-4", "t2", {"path": "a"}),
        model_line("claude-haiku-4", "t3", {"path": "a"}),
        claude_code_line("t4", {"path": "a", "ffset": 2, "Path": "b"}),
    ])
    report = audit_file(session, FS_TOOLS, by=["model", "tool"])
    by_model = report.by("model")
    assert [(g["group"], g["calls"], g["calls_with_unknown_keys"], g["per_1000_audited"]) for g in by_model] == [
        ({"model": "(unknown)"}, 1, 1, 1000.0),
        ({"model": "claude-opus-4"}, 2, 1, 500.0),
        ({"model": "claude-haiku-4"}, 1, 0, 0.0),
    ]
    assert by_model[0]["unknown_keys"] == {"Path": 1, "ffset": 1}
    assert by_model[0]["causes"] == {"case_variant": 1, "truncated": 1}
    # Model, tool and file groups add up to the coverage; a call is in the
    # group of each key it carried.
    for dimension in ("model", "tool", "file"):
        assert sum(g["calls"] for g in report.by(dimension)) == report.coverage.calls
    assert sorted((g["group"]["key"], g["calls"]) for g in report.by("key")) == [
        ("(none)", 2), ("Path", 1), ("ffset", 2),
    ]
    # The combination audit_file was asked for, as `audit --by model --by tool`.
    pairs = report.by("model", "tool")
    assert {g["group"]["model"]: g["calls"] for g in pairs} == {
        "(unknown)": 1, "claude-opus-4": 2, "claude-haiku-4": 1,
    }
    assert all(g["group"]["tool"] == "mcp__fs__read_file" for g in pairs)


def test_report_by_refuses_what_was_not_grouped(tmp_path):
    report = audit_file(write(tmp_path / "s.jsonl", [claude_code_line("t1", {"path": "a"})]), FS_TOOLS)
    with pytest.raises(ValueError, match="model, tool, key, cause or file"):
        report.by("models")
    with pytest.raises(ValueError, match="by="):
        report.by("model", "tool")
    with pytest.raises(ValueError, match="needs a dimension"):
        report.by()
    with pytest.raises(ValueError, match="model, tool, key, cause or file"):
        audit_file(write(tmp_path / "t.jsonl", []), FS_TOOLS, by=["modle"])
