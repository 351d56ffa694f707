"""The LangChain adapter: tool calls from a fake chat model, run by LangChain tools."""

from __future__ import annotations

import asyncio

from conftest import Recorded, framework

from mcp_unknown_keys import Auditor


def test_each_tool_call_is_audited_against_the_tools_args_schema_and_runs_unchanged():
    framework("langchain_core", "langchain-core==1.8.1")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from mcp_unknown_keys.langchain import AuditCallbackHandler

    received: list[tuple[str, int]] = []

    @tool
    def read_file(path: str, offset: int = 0) -> str:
        """Reads a file from a line offset."""
        received.append((path, offset))
        return f"{path} from line {offset}"

    @tool
    def list_dir(directory: str) -> str:
        """Lists a directory."""
        return directory

    calls = [
        {"name": "read_file", "args": {"path": "src/app.rs", "ffset": 12}, "id": "call_1"},
        {"name": "list_dir", "args": {"directory": "src"}, "id": "call_2"},
        {"name": "read_file", "args": {"path": "src/lib.rs", "ffset": 3}, "id": "call_3"},
    ]
    model = GenericFakeChatModel(messages=iter([AIMessage(content="", tool_calls=calls)]))
    tools = {"read_file": read_file, "list_dir": list_dir}
    recorded = Recorded()
    handler = AuditCallbackHandler(tools.values(), auditor=Auditor(on_warn=recorded))
    config = {"callbacks": [handler]}

    message = model.invoke("read the app", config=config)
    audited = [tools[call["name"]].invoke(call, config=config).content for call in message.tool_calls[:2]]
    audited.append(asyncio.run(read_file.ainvoke(message.tool_calls[2], config=config)).content)
    plain = [tools[call["name"]].invoke(call).content for call in message.tool_calls]

    [warning] = recorded.warnings
    assert (warning.tool, warning.unknown_keys, warning.id) == ("read_file", ["ffset"], "call_1")
    assert warning.missing_keys == [{"key": "offset", "default": 0}]
    # The tool ran from line 0, as it would have without the alarm.
    assert audited == plain == ["src/app.rs from line 0", "src", "src/lib.rs from line 0"]
    assert received[:3] == [("src/app.rs", 0), ("src/lib.rs", 0), ("src/app.rs", 0)]
    assert handler.auditor.tools == ["list_dir", "read_file"]
    coverage = handler.auditor.coverage
    assert (coverage.calls, coverage.audited) == (3, 3)
