"""The Auditor: the core's rules, read from Python dicts and JSON text alike."""

from __future__ import annotations

import copy
import json
import sys
import threading
import time

import pytest
from conftest import Recorded

from mcp_unknown_keys import Auditor, Coverage, Warning

FS_READ = {
    "name": "fs_read",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "offset": {"type": "integer", "default": 0}},
    },
}
TASK = {"name": "task", "inputSchema": {"properties": {"prompt": {"type": "string"}}}}
ENTITIES = {
    "name": "create_entities",
    "inputSchema": {
        "properties": {
            "entities": {"type": "array", "items": {"properties": {"name": {}, "kind": {}}}},
            "options": {"properties": {"recursive": {}}, "patternProperties": {"^x-": {}}},
        }
    },
}
CATALOGUE = [FS_READ, TASK, ENTITIES]


def auditor(**options) -> tuple[Auditor, Recorded]:
    recorded = Recorded()
    audit = Auditor(on_warn=recorded, **options)
    audit.replace_catalog(CATALOGUE)
    return audit, recorded


CALLS = [
    ("fs_read", {"path": "a", "ffset": 12}),
    ("fs_read", {"path": "a", "the rest": 1, "pàth\n": 2}),
    ("task", {"prompt": "Investigate the", "nvestigate": "…", "the rest": "…"}),
    ("create_entities", {"entities": [{"name": "a", "age": 3}, {"nme": "b"}], "options": {"recursve": 1, "x-a": 2}}),
    ("create_entities", {"entities": "not a list", "options": [{"deep": {"deeper": 1}}], "extra": None}),
    ("fs_read", {1: "a", True: 2, None: 3, 1.5: 4}),
    ("fs_read", {}),
]


@pytest.mark.parametrize(("tool", "arguments"), CALLS)
def test_a_dict_and_its_json_text_raise_the_same_warning(tool, arguments):
    from_dict, _ = auditor()
    from_text, _ = auditor()
    warned = from_dict.audit(tool, arguments, id="call_1")
    also = from_text.audit(tool, json.dumps(arguments), id="call_1")
    assert (warned and warned.to_dict()) == (also and also.to_dict())
    assert from_dict.coverage == from_text.coverage


def test_a_warning_carries_the_json_lines_fields_and_diagnosis():
    audit, recorded = auditor()
    warning = audit.audit("fs_read", {"path": "a", "ffset": 12}, id=7)
    assert recorded.warnings == [warning]
    assert warning.tool == "fs_read"
    assert warning.unknown_keys == ["ffset"]
    assert warning.declared_keys == ["offset", "path"]
    assert warning.id == "7"
    assert warning.hints == [{"key": "ffset", "cause": "truncated", "suggestion": "offset"}]
    assert warning.missing_keys == [{"key": "offset", "default": 0}]
    assert warning.unknown_paths == []
    assert list(warning.to_dict()) == [
        "tool", "unknown_keys", "declared_keys", "id", "hints", "missing_keys", "unknown_paths",
    ]
    assert json.loads(warning.to_json()) == warning.to_dict()
    assert str(warning) == (
        "fs_read was called with undeclared argument(s) ffset; it declares offset, path"
        " — ffset → offset? (truncated); offset was not sent: the server will use its default, 0"
    )
    assert repr(warning) == (
        "Warning(tool='fs_read', unknown_keys=['ffset'], unknown_paths=[], missing_required=[], "
        "declared_keys=['offset', 'path'], id='7')"
    )


def test_nested_keys_are_reported_as_paths_unless_top_level_only():
    call = {"entities": [{"name": "a", "age": 3}], "options": {"recursve": True, "x-trace": 1}}
    nested, _ = auditor()
    assert nested.audit("create_entities", call).unknown_paths == ["entities[].age", "options.recursve"]
    top, _ = auditor(top_level_only=True)
    assert top.audit("create_entities", call) is None
    assert top.coverage.audited == 1


def test_each_pair_is_said_once_per_auditor():
    first, recorded = auditor()
    assert first.audit("fs_read", {"ffset": 1}) is not None
    assert first.audit("fs_read", '{"ffset":2,"path":"b"}') is None
    again = first.audit("fs_read", {"ffset": 1, "limit": 3})
    assert again.unknown_keys == ["limit"]
    other, _ = auditor()
    assert other.audit("fs_read", {"ffset": 1}).unknown_keys == ["ffset"]
    assert [w.unknown_keys for w in recorded.warnings] == [["ffset"], ["limit"]]


def test_allowed_keys_are_tolerated_as_reason_is():
    audit, _ = auditor(allow=["toolCallId", "entities[].age"])
    call = {"path": "a", "toolCallId": "x", "reason": "why"}
    assert audit.audit("fs_read", call) is None
    assert audit.audit("create_entities", {"entities": [{"age": 3}]}) is None
    with pytest.raises(TypeError):
        Auditor(allow="toolCallId")


def test_the_default_sink_writes_the_cores_line_to_sys_stderr(capsys):
    audit = Auditor()
    audit.replace_catalog([FS_READ])
    warning = audit.audit("fs_read", {"path": "a", "ffset": 12})
    assert capsys.readouterr().err == f"mcp-unknown-keys: {warning}\n"


def test_notes_on_schemas_not_read_whole_are_said_once():
    remote = {"name": "fetch", "inputSchema": {"$ref": "https://example.com/fetch.json"}}
    notes: list[tuple[str, str]] = []
    audit = Auditor(on_warn=Recorded(), on_note=lambda tool, note: notes.append((tool, note)))
    audit.replace_catalog([remote])
    audit.replace_catalog([remote])
    assert [tool for tool, _ in notes] == ["fetch"]
    assert "is not fetched" in notes[0][1]
    assert audit.notes == notes
    assert audit.audit("fetch", {"url": "x"}) is None
    assert audit.coverage.unaudited == {"declares_nothing": 1}


def test_a_callable_that_raises_is_reported_and_changes_nothing(monkeypatch):
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    def broken(warning):
        raise RuntimeError("the host's log is down")

    audit = Auditor(on_warn=broken)
    audit.replace_catalog([FS_READ])
    warning = audit.audit("fs_read", {"ffset": 1})
    assert warning.unknown_keys == ["ffset"]
    assert [str(u.exc_value) for u in unraisable] == ["the host's log is down"]
    with pytest.raises(TypeError):
        Auditor(on_warn="not callable")


class Opaque:
    def __repr__(self) -> str:
        return "Opaque()"


def hostile_calls():
    looped: dict = {"entities": []}
    looped["entities"].append(looped)
    deep: dict = {}
    inner = deep
    for _ in range(200):
        inner["options"] = {}
        inner = inner["options"]
    return [
        (None, {"path": "a"}),
        (12, {"path": "a"}),
        (Opaque(), {"path": "a"}),
        ("fs_read", None),
        ("fs_read", []),
        ("fs_read", ""),
        ("fs_read", "[1]"),
        ("fs_read", "{" * 100_000),
        ("fs_read", b"\xff\xfe"),
        ("fs_read", bytearray(b'{"ffset":1}')),
        ("fs_read", "\ud800"),
        ("fs_read", {"\ud800": 1, "path": "\udfff"}),
        ("fs_read", {Opaque(): 1}),
        ("fs_read", {(1, 2): 1}),
        ("fs_read", {"path": Opaque(), "offset": 10**40, "x": float("nan")}),
        ("create_entities", looped),
        ("create_entities", {"options": deep}),
        ("create_entities", {"entities": [Opaque(), None, 1, "x", [[{"age": 1}]]], "options": {"x-a": Opaque()}}),
        ("create_entities", {"options": {Opaque(): 1}}),
        ("task", {"prompt": Opaque(), "promt": "x"}),
    ]


def test_whatever_a_model_wrote_is_audited_or_counted_never_raised_never_changed():
    audit, _ = auditor()
    calls = hostile_calls()
    for tool, arguments in calls:
        before = copy.deepcopy(arguments)
        result = audit.audit(tool, arguments, id=Opaque())
        assert result is None or isinstance(result, Warning)
        assert repr(arguments) == repr(before)
    coverage = audit.coverage
    assert coverage.calls == len(calls)
    assert coverage.unaudited["unlisted_tool"] == 3
    assert coverage.unlisted_tools == {"None": 1, "12": 1, "Opaque()": 1}
    # None, [], "", "[1]", an unclosed object, bad UTF-8, a lone surrogate as
    # text, and keys with no JSON form (an object, a tuple; one nested in a
    # value the nested scan reads), which json.dumps would refuse too.
    assert coverage.unaudited["unreadable_arguments"] == 10
    assert coverage.audited == len(calls) - 13


def test_coverage_counts_every_call_by_reason():
    audit = Auditor(on_warn=Recorded())
    audit.audit("fs_read", {"path": "a"})
    audit.replace_catalog([FS_READ, {"name": "ping", "inputSchema": {"type": "object"}}])
    audit.audit("fs_read", {"path": "a"})
    audit.audit("fs_write", {"path": "a"})
    audit.audit("ping", {})
    audit.audit("fs_read", "not json")
    coverage = audit.coverage
    assert isinstance(coverage, Coverage)
    assert (coverage.calls, coverage.audited, coverage.is_complete) == (5, 1, False)
    assert coverage.unaudited == {
        "no_catalogue": 1, "unlisted_tool": 1, "declares_nothing": 1, "unreadable_arguments": 1,
    }
    assert coverage.unlisted_tools == {"fs_read": 1, "fs_write": 1}
    assert coverage.to_json() == json.dumps({"coverage": coverage.to_dict()}, separators=(",", ":"))
    assert str(coverage) == (
        "5 call(s): 1 audited, 4 unaudited "
        "(1 no_catalogue, 1 unlisted_tool, 1 declares_nothing, 1 unreadable_arguments)"
    )
    audit.clear_catalog()
    audit.audit("fs_read", {"path": "a"})
    assert audit.coverage.unaudited["no_catalogue"] == 2


def schema(*keys: str) -> dict:
    return {"type": "object", "properties": {key: {"type": "string"} for key in keys}}


EVERY_FORM = {
    "mcp": [{"name": "read", "inputSchema": schema("path")}],
    "openai chat": [{"type": "function", "function": {"name": "read", "parameters": schema("path")}}],
    "openai responses": [{"type": "function", "name": "read", "parameters": schema("path")}],
    "anthropic": [{"name": "read", "input_schema": schema("path")}],
    "gemini": [{"functionDeclarations": [{"name": "read", "parameters": schema("path")}]}],
    "bedrock": [{"toolSpec": {"name": "read", "inputSchema": {"json": schema("path")}}}],
    "a listing": {"tools": [{"name": "read", "inputSchema": schema("path")}], "nextCursor": None},
    "a response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "read", "inputSchema": schema("path")}]}},
    "a tuple": ({"name": "read", "inputSchema": schema("path")},),
    "one tool": {"name": "read", "inputSchema": schema("path")},
}


@pytest.mark.parametrize("form", list(EVERY_FORM))
def test_a_catalogue_is_read_in_every_form_as_objects_and_as_text(form):
    for tools in (EVERY_FORM[form], json.dumps(EVERY_FORM[form]), json.dumps(EVERY_FORM[form]).encode()):
        audit = Auditor(on_warn=Recorded())
        audit.replace_catalog(tools)
        assert audit.tools == ["read"], form
        assert audit.audit("read", {"path": "a", "pth": "b"}).unknown_keys == ["pth"]


def test_a_pydantic_model_is_read_by_its_json_dump():
    from pydantic import BaseModel, ConfigDict, Field

    class Tool(BaseModel):
        model_config = ConfigDict(populate_by_name=True)
        name: str
        input_schema: dict = Field(alias="inputSchema")

    audit = Auditor(on_warn=Recorded())
    audit.replace_catalog([Tool(name="read", input_schema=schema("path"))])
    assert audit.tools == ["read"]


@pytest.mark.parametrize(
    ("tools", "error"),
    [("{not json", ValueError), ("12", TypeError), ({"tools": "x"}, TypeError), ([Opaque()], TypeError), (None, TypeError)],
)
def test_a_catalogue_that_cannot_be_read_is_an_error_and_loses_nothing(tools, error):
    audit, _ = auditor()
    with pytest.raises(error):
        audit.replace_catalog(tools)
    assert audit.tools == ["create_entities", "fs_read", "task"]


def test_a_tool_that_contains_itself_stays_listed_declaring_nothing():
    looped: dict = {"name": "x"}
    looped["inputSchema"] = looped
    audit = Auditor(on_warn=Recorded())
    audit.replace_catalog([looped, FS_READ])
    assert audit.tools == ["fs_read", "x"]
    assert audit.audited_tools == ["fs_read"]


def nested(levels: int) -> dict:
    deep: dict = {}
    inner = deep
    for _ in range(levels):
        inner["a"] = {}
        inner = inner["a"]
    return deep


DEEP = {"name": "deep", "inputSchema": {"properties": {"x": nested(200)}}}


@pytest.mark.parametrize("form", ["list", "listing", "response", "text", "page"])
def test_a_tool_nested_too_deep_stays_listed_declaring_nothing_and_the_rest_are_audited(form):
    # Every other door reads a listing tool by tool: one tool too deep to
    # read loses its own schema, never the whole listing.
    tools = [FS_READ, DEEP, TASK]
    given = {
        "list": tools,
        "listing": {"tools": tools},
        "response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}},
        "text": json.dumps({"tools": tools}),
        "page": {"tools": tools, "nextCursor": "2"},
    }[form]
    recorded, notes = Recorded(), []
    audit = Auditor(on_warn=recorded, on_note=lambda tool, text: notes.append((tool, text)))
    if form == "page":
        audit.list_page(given, first=True, more=True)
    else:
        audit.replace_catalog(given)
    assert audit.tools == ["deep", "fs_read", "task"]
    assert audit.audited_tools == ["fs_read", "task"]
    assert audit.audit("fs_read", {"path": "a", "ffset": 1}).unknown_keys == ["ffset"]
    assert audit.audit("deep", {"y": 1}) is None
    coverage = audit.coverage
    assert (coverage.calls, coverage.audited) == (2, 1)
    assert coverage.unaudited == {"declares_nothing": 1}
    assert notes == [("deep", "its schema nests too deep to read: the tool's arguments are not audited")]
    audit.replace_catalog(given)
    assert len(notes) == 1, "said once"


# The specification's standard catalogue (its reference tests UK-3, UK-7).
STANDARD = [
    {
        "type": "function",
        "function": {
            "name": "fs_read",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "offset": {"type": "integer"}}},
        },
    },
    {"type": "function", "function": {"name": "fs_ping", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "fs_noop", "parameters": {"type": "object", "properties": {}}}},
]


def test_audited_tools_is_the_set_the_listing_left_behind():
    audit = Auditor(on_warn=Recorded())
    audit.replace_catalog(STANDARD)
    assert audit.audited_tools == ["fs_noop", "fs_ping", "fs_read"]
    # Listed, never audited: declaring nothing is not a reason to warn.
    assert audit.audit("fs_ping", {"anything": 1}) is None
    assert audit.audit("fs_noop", {"anything": 1}) is None
    assert audit.coverage.unaudited == {"declares_nothing": 2}


def test_audited_tools_holds_an_object_schema_whose_properties_are_absent_or_null():
    audit = Auditor(on_warn=Recorded())
    audit.replace_catalog(
        [
            {"name": "lone", "inputSchema": {"type": "object"}},
            {"name": "null", "inputSchema": {"properties": None}},
            {"name": "closed", "inputSchema": {"properties": {}, "additionalProperties": False}},
            FS_READ,
        ]
    )
    assert audit.audited_tools == ["closed", "fs_read", "lone", "null"]


def test_audited_tools_leaves_out_declarations_it_cannot_read():
    audit = Auditor(on_warn=Recorded())
    audit.replace_catalog(
        [
            FS_READ,
            "not an object",
            {"weird": 1},
            {"type": "function", "function": "fs_string"},
            {"type": "function", "function": {"name": 7, "parameters": {}}},
            {"type": "function", "function": {"name": "no_parameters"}},
            {"type": "function", "function": {"name": "string_parameters", "parameters": "object"}},
            {"name": "no_schema"},
            {"name": "nope", "inputSchema": {"properties": "nope"}},
            {"name": "list", "inputSchema": {"properties": ["path"]}},
        ]
    )
    assert audit.audited_tools == ["fs_read"]
    assert audit.tools == ["fs_read", "list", "no_parameters", "no_schema", "nope", "string_parameters"]


def test_audited_tools_follows_the_last_declaration_and_survives_a_failed_listing():
    audit = Auditor(on_warn=Recorded())
    audit.replace_catalog(
        [
            {"name": "readable_then_not", "inputSchema": schema("a")},
            {"name": "readable_then_not", "inputSchema": "unreadable"},
            {"name": "not_then_readable", "inputSchema": {"properties": "nope"}},
            {"name": "not_then_readable", "inputSchema": {"type": "object"}},
        ]
    )
    assert audit.audited_tools == ["not_then_readable"]
    with pytest.raises((TypeError, ValueError)):
        audit.replace_catalog("{not json")
    assert audit.audited_tools == ["not_then_readable"], "a failed listing leaves the previous set"


def test_a_paginated_listing_is_assembled_page_by_page():
    audit = Auditor(on_warn=Recorded())
    audit.list_page({"tools": [FS_READ], "nextCursor": "2"}, first=True, more=True)
    assert audit.tools == ["fs_read"]
    audit.list_page({"tools": [TASK]}, first=False, more=False)
    assert audit.tools == ["fs_read", "task"]
    audit.list_page([TASK], first=False, more=False)  # a page of no open listing: passed over
    assert audit.tools == ["fs_read", "task"]
    audit.list_page([ENTITIES], first=True, more=False)
    assert audit.tools == ["create_entities"]


def test_threads_share_one_auditor_and_each_pair_is_said_once():
    recorded = Recorded()
    audit = Auditor(on_warn=recorded)
    audit.replace_catalog([FS_READ])
    calls = [{"path": "a", f"k{i % 50}": i} for i in range(400)]

    def work(offset: int) -> None:
        for i in range(len(calls)):
            call = calls[(i + offset) % len(calls)]
            audit.audit("fs_read", call if i % 2 else json.dumps(call))

    threads = [threading.Thread(target=work, args=(n * 37,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(recorded.pairs) == sorted(("fs_read", f"k{i}") for i in range(50))
    assert audit.coverage.audited == 8 * 400


def test_the_gil_is_released_while_a_long_text_is_scanned():
    audit, _ = auditor()
    text = json.dumps({"path": "x" * (8 << 20)})
    ticks = [0]
    running = threading.Event()
    stop = threading.Event()

    def tick() -> None:
        running.set()
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0)  # lets the test's thread take the GIL back

    # No thread switch but those a thread asks for: only a released GIL
    # lets the ticking thread count while the call runs.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(100)
    thread = threading.Thread(target=tick)
    try:
        thread.start()
        running.wait()
        before = ticks[0]
        # Many calls, so that a thread the system is slow to wake gets a turn.
        for _ in range(50):
            audit.audit("fs_read", text)
        during = ticks[0] - before
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(interval)
    assert during > 0


def test_the_packages_example_runs():
    import doctest

    import mcp_unknown_keys

    results = doctest.testmod(mcp_unknown_keys)
    assert (results.failed, results.attempted) == (0, 4)


def test_required_keys_a_call_lacked_are_said_once_and_no_missing_turns_them_off():
    tools = [{"name": "read", "inputSchema": {"type": "object", "properties": {"path": {}, "n": {}}, "required": ["path"]}}]
    audit, recorded = auditor()
    audit.replace_catalog(tools)
    warning = audit.audit("read", {"n": 1}, id=1)
    assert (warning.unknown_keys, warning.missing_required, warning.missing_cause) == ([], ["path"], "missing_required")
    assert warning.to_dict()["missing_required"] == ["path"]
    assert audit.audit("read", {"n": 2}) is None, "said once"
    emptied, _ = auditor()
    emptied.replace_catalog(tools)
    assert emptied.audit("read", {}).missing_cause == "emptied"
    quiet, said = auditor(no_missing=True)
    quiet.replace_catalog(tools)
    assert quiet.audit("read", {"n": 1}) is None
    assert said.warnings == []
