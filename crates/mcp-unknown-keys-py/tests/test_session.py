"""The Session: both sides of an MCP session read as the proxy reads them, verdicts included."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
from conftest import Recorded, framework

from mcp_unknown_keys import Coverage, Session, Warning, audit_file

# A recorded proxy session: both directions of the JSON-RPC traffic, one
# message a line, as `mcp-unknown-keys audit` reads it.
PROXY_SESSION = (
    Path(__file__).resolve().parents[2] / "mcp-unknown-keys-cli" / "tests" / "fixtures" / "proxy-session.jsonl"
)


def listing_request(id, cursor=None) -> dict:
    params = {"cursor": cursor} if cursor else {}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}


def page(id, tools: dict[str, list[str]], next_cursor=None) -> dict:
    result = {
        "tools": [
            {"name": name, "inputSchema": {"type": "object", "properties": {key: {} for key in keys}}}
            for name, keys in tools.items()
        ]
    }
    if next_cursor:
        result["nextCursor"] = next_cursor
    return {"jsonrpc": "2.0", "id": id, "result": result}


def call(id, tool: str, arguments) -> dict:
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def result(id, is_error=False) -> dict:
    return {"jsonrpc": "2.0", "id": id, "result": {"content": [], "isError": is_error}}


def error(id) -> dict:
    return {"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "invalid params"}}


LIST_CHANGED = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


def listed(tools: dict[str, list[str]], **options) -> tuple[Session, Recorded, list]:
    """A session whose host listed `tools` in one page, recording what it says."""
    recorded, verdicts = Recorded(), []
    session = Session(on_warn=recorded, on_verdict=verdicts.append, **options)
    session.from_host(listing_request(0))
    session.from_server(page(0, tools))
    return session, recorded, verdicts


def keys(warnings: list[Warning]) -> list[list[str]]:
    return [warning.unknown_keys for warning in warnings]


def test_a_paginated_listing_is_assembled_and_each_pair_is_said_once():
    session, recorded, _ = listed({})
    session.from_host(listing_request(1))
    session.from_server(page(1, {"fs_read": ["path"]}, next_cursor="p2"))
    # A call meets the pages listed so far.
    assert keys(session.from_host(call(2, "fs_read", {"path": "a", "ffset": 1}))) == [["ffset"]]
    session.from_host(listing_request(3, cursor="p2"))
    session.from_server(page(3, {"fs_list": ["dir"]}))
    assert session.tools == session.audited_tools == ["fs_list", "fs_read"]
    assert session.from_host(call(4, "fs_read", {"path": "b", "ffset": 2})) == []
    assert keys(session.from_host(call(5, "fs_list", {"dir": ".", "depth": 1}))) == [["depth"]]
    # What it returns is what it delivered.
    assert keys(recorded.warnings) == [["ffset"], ["depth"]]
    assert (session.coverage.calls, session.coverage.audited) == (3, 3)


def test_list_changed_drops_the_catalogue_until_the_next_listing():
    session, recorded, _ = listed({"fs_read": ["path"]})
    session.from_server(LIST_CHANGED)
    assert session.tools == []
    assert session.from_host(call(1, "fs_read", {"ffset": 1})) == []
    assert session.coverage.unaudited == {"no_catalogue": 1}
    session.from_host(listing_request(2))
    session.from_server(page(2, {"fs_read": ["path"]}))
    assert keys(session.from_host(call(3, "fs_read", {"ffset": 1}))) == [["ffset"]]
    assert recorded.pairs == [("fs_read", "ffset")]


def test_a_relisting_without_list_changed_replaces_the_catalogue():
    session, _, _ = listed({"fs_read": ["path"]})
    session.from_host(listing_request(1))
    session.from_server(page(1, {"fs_list": ["dir"]}))
    assert session.from_host(call(2, "fs_read", {"ffset": 1})) == []
    assert session.coverage.unlisted_tools == {"fs_read": 1}
    # An error answering a listing keeps the catalogue in use.
    session.from_host(listing_request(3))
    session.from_server(error(3))
    assert session.tools == ["fs_list"]


def test_each_flagged_call_is_judged_by_its_answer_its_cancellation_or_the_end():
    session, _, handed = listed({"fs_read": ["path"]})
    for id in range(1, 6):
        session.from_host(call(id, "fs_read", {"path": "a", f"k{id}": 1}))
    # A call with only declared keys awaits no verdict.
    session.from_host(call(9, "fs_read", {"path": "a"}))
    session.from_server(result(9))
    session.from_server(result(1))
    session.from_server(error(2))
    session.from_server(result(3, is_error=True))
    session.from_host({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}})
    settled = [(v["verdict"], v["id"]) for v in session.verdicts]
    assert settled == [("ignored", "1"), ("rejected", "2"), ("rejected", "3"), ("unanswered", "4")]
    assert session.finish() == [{"verdict": "unanswered", "tool": "fs_read", "id": "5", "unknown_keys": ["k5"]}]
    # Finishing again judges nothing more.
    assert session.finish() == []
    assert handed == session.verdicts
    assert len(handed) == 5


def test_a_verdict_is_the_json_line_a_door_logs():
    session, _, handed = listed({"create": ["options"]})
    session.from_host(listing_request(1))
    session.from_server(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "tools": [{"name": "create", "inputSchema": {"properties": {"options": {"properties": {"deep": {}}}}}}]
            },
        }
    )
    session.from_host(call("c", "create", {"options": {"deep": 1, "recursve": True}, "ffset": 1}))
    session.from_server(result("c"))
    assert handed == [
        {"verdict": "ignored", "tool": "create", "id": "c", "unknown_keys": ["ffset"], "unknown_paths": ["options.recursve"]}
    ]


def test_ids_compare_by_value():
    session, _, _ = listed({"fs_read": ["path"]})
    session.from_host(call(1, "fs_read", {"ffset": 1}))
    session.from_server(result(1.0))
    assert [v["verdict"] for v in session.verdicts] == ["ignored"]
    # And a listing requested as 2.0 is answered by 2.
    session.from_host(listing_request(2.0))
    session.from_server(page(2, {"fs_list": ["dir"]}))
    assert session.tools == ["fs_list"]


def test_a_batch_is_read_message_by_message():
    session, recorded, _ = listed({"fs_read": ["path"], "fs_list": ["dir"]})
    warnings = session.from_host(
        [call(1, "fs_read", {"ffset": 1}), {"jsonrpc": "2.0", "method": "x"}, call(2, "fs_list", {"dri": "."})]
    )
    assert keys(warnings) == [["ffset"], ["dri"]] == keys(recorded.warnings)
    session.from_server(json.dumps([result(1), error(2)]))
    assert [(v["id"], v["verdict"]) for v in session.verdicts] == [("1", "ignored"), ("2", "rejected")]


@pytest.mark.parametrize(
    "form", [lambda m: m, json.dumps, lambda m: json.dumps(m).encode(), lambda m: bytearray(json.dumps(m).encode())]
)
def test_a_message_reads_alike_as_a_dict_as_text_and_as_bytes(form):
    session = Session(on_warn=lambda warning: None)
    session.from_host(form(listing_request(1)))
    session.from_server(form(page(1, {"fs_read": ["path", "offset"]})))
    warnings = session.from_host(form(call(2, "fs_read", {"path": "a", "ffset": 1})))
    assert [w.to_dict() for w in warnings] == [w.to_dict() for w in reference_warnings()]
    session.from_server(form(result(2)))
    assert [v["verdict"] for v in session.verdicts] == ["ignored"]


def reference_warnings() -> list[Warning]:
    session = Session(on_warn=lambda warning: None)
    session.from_host('{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    session.from_server(
        '{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fs_read",'
        '"inputSchema":{"type":"object","properties":{"path":{},"offset":{}}}}]}}'
    )
    return session.from_host(
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fs_read","arguments":{"path":"a","ffset":1}}}'
    )


def test_a_pydantic_model_is_read_as_its_sender_writes_it():
    pydantic = framework("pydantic", "pydantic")

    class Params(pydantic.BaseModel):
        name: str
        arguments: dict
        meta: dict | None = pydantic.Field(default=None, alias="_meta")

    class Request(pydantic.BaseModel):
        jsonrpc: str = "2.0"
        id: int
        method: str
        params: Params | None = None

    class Tool(pydantic.BaseModel):
        name: str
        declared: dict = pydantic.Field(alias="inputSchema")

    class Listing(pydantic.BaseModel):
        tools: list[Tool]
        next_cursor: str | None = pydantic.Field(default=None, alias="nextCursor")

    class Response(pydantic.BaseModel):
        jsonrpc: str = "2.0"
        id: int
        result: Listing

    session = Session(on_warn=lambda warning: None)
    # Unset fields are left out, as the MCP SDK sends them.
    session.from_host(Request(id=1, method="tools/list"))
    tool = Tool(name="fs_read", inputSchema={"properties": {"path": {}}})
    # Written by alias: `inputSchema`, which declares `path`.
    session.from_server(Response(id=1, result=Listing(tools=[tool])))
    assert session.audited_tools == ["fs_read"]
    request = Request(id=2, method="tools/call", params=Params(name="fs_read", arguments={"ffset": 1}))
    assert keys(session.from_host(request)) == [["ffset"]]


def test_what_is_not_json_rpc_is_not_acted_on_and_never_raises():
    session, recorded, _ = listed({"fs_read": ["path"]})
    for message in ["not json", b"\xff\xfe", "\ud800", "", "[]", "1", None, 3, {"x": 1}, [{"id": 1}], {"method": 5}]:
        assert session.from_host(message) == []
        assert session.from_server(message) == []
    # A call with arguments that are no object is counted, not audited.
    assert session.from_host(call(1, "fs_read", "not an object")) == []
    assert session.coverage.unaudited == {"unreadable_arguments": 1}
    assert recorded.warnings == []
    # Arguments nested deeper than a catalogue is read: read as the wire's text is.
    deep = 1
    for _ in range(5000):
        deep = {"a": deep}
    assert keys(session.from_host(call(2, "fs_read", deep))) == [["a"]]


def test_a_large_message_is_read_as_a_small_one():
    # From 16 KiB on, the message is read with the GIL released.
    session, _, _ = listed({"fs_read": ["path"]})
    arguments = {"path": "a" * 40_000, "ffset": 1}
    assert keys(session.from_host(call(1, "fs_read", arguments))) == [["ffset"]]
    session.from_server({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"text": "x" * 40_000}]}})
    assert [v["verdict"] for v in session.verdicts] == ["ignored"]


def test_the_verdicts_kept_are_the_latest_10000_and_on_verdict_sees_each():
    session, _, handed = listed({"fs_read": ["path"]})
    for id in range(10_005):
        session.from_host(call(id, "fs_read", {"ffset": 1}))
        session.from_server(result(id))
    kept = session.verdicts
    assert len(kept) == 10_000
    assert (kept[0]["id"], kept[-1]["id"]) == ("5", "10004")
    assert len(handed) == 10_005


def test_a_value_with_no_json_form_is_a_type_error():
    session = Session(on_warn=lambda warning: None)
    looped: dict = {}
    looped["self"] = looped
    for value in [{1j: 1}, {"params": {1, 2}}, object(), looped]:
        with pytest.raises(TypeError, match="no JSON form"):
            session.from_host(value)
    # Shared, not contained in itself: written twice.
    shared = {"k": 1}
    assert session.from_host([shared, shared]) == []


def test_allow_and_top_level_only():
    session, _, _ = listed({"fs_read": ["path", "options"]}, allow=["trace_id"], top_level_only=True)
    arguments = {"path": "a", "trace_id": "t", "reason": "r", "options": {"recursve": True}}
    assert session.from_host(call(1, "fs_read", arguments)) == []
    assert keys(session.from_host(call(2, "fs_read", {"ffset": 1, "trace_id": "t"}))) == [["ffset"]]
    with pytest.raises(TypeError, match="iterable of keys"):
        Session(allow="trace_id")
    with pytest.raises(TypeError, match="on_verdict must be callable"):
        Session(on_verdict=1)


def test_a_callback_may_call_the_session_back_and_what_it_raises_is_unraisable(monkeypatch):
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    seen = []

    def on_verdict(verdict):
        seen.append((verdict["id"], session.coverage.calls, len(session.verdicts)))
        raise RuntimeError("the host's bug")

    session = Session(on_warn=lambda warning: session.coverage, on_verdict=on_verdict)
    session.from_host(listing_request(0))
    session.from_server(page(0, {"fs_read": ["path"]}))
    session.from_host(call(1, "fs_read", {"ffset": 1}))
    assert session.from_server(result(1)) == []
    assert seen == [("1", 1, 1)]
    assert [str(u.exc_value) for u in unraisable] == ["the host's bug"]
    assert [v["verdict"] for v in session.verdicts] == ["ignored"]


def test_a_tool_too_deep_to_read_is_said_once_and_the_rest_audited():
    notes = []
    session = Session(on_warn=lambda warning: None, on_note=lambda tool, text: notes.append(tool))
    schema: dict = {"type": "object"}
    for _ in range(300):
        schema = {"type": "object", "properties": {"a": schema}}
    tools = [{"name": "deep", "inputSchema": schema}, {"name": "fs_read", "inputSchema": {"properties": {"path": {}}}}]
    for id in (1, 2):
        session.from_host(listing_request(id))
        session.from_server({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}})
    assert notes == ["deep"]
    assert session.tools == ["deep", "fs_read"]
    assert session.audited_tools == ["fs_read"]


def test_threads_share_one_session():
    session, recorded, _ = listed({"fs_read": ["path"]})

    def host(thread: int) -> None:
        for n in range(200):
            id = thread * 1000 + n
            session.from_host(call(id, "fs_read", {"path": "a", f"k{thread}": n}))
            session.from_server(result(id))

    threads = [threading.Thread(target=host, args=(thread,)) for thread in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert session.coverage.calls == 800
    assert len(session.verdicts) == 800
    assert sorted(recorded.pairs) == [("fs_read", f"k{thread}") for thread in range(4)]


def direction(message: dict) -> str:
    """Who sent a recorded message: the server answers and says its tools
    changed; the host sends every other request and notification."""
    if "method" not in message or message["method"] == "notifications/tools/list_changed":
        return "server"
    return "host"


def test_a_recorded_proxy_session_reads_as_audit_reads_it():
    recorded, handed = Recorded(), []
    session = Session(on_warn=recorded, on_verdict=handed.append)
    returned = []
    for line in PROXY_SESSION.read_text().splitlines():
        message = json.loads(line)
        read = session.from_host if direction(message) == "host" else session.from_server
        returned += read(line)
    report = audit_file(PROXY_SESSION)
    assert [w.to_dict() for w in returned] == [w.to_dict() for w in report.warnings]
    assert returned == recorded.warnings
    assert session.coverage == report.coverage
    assert isinstance(session.coverage, Coverage)
    assert [(v["verdict"], v["id"]) for v in session.verdicts] == [
        ("ignored", "4"),
        ("ignored", "five"),
        ("ignored", "7"),
        ("ignored", "10"),
    ]
    # Id 13 was never answered.
    assert [(v["verdict"], v["id"]) for v in session.finish()] == [("unanswered", "13")]
    assert handed == session.verdicts
