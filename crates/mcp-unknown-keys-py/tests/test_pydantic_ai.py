"""The pydantic-ai adapter: an agent run by a FunctionModel, over a real MCP server and a function toolset."""

from __future__ import annotations

from conftest import Recorded, framework, time_server

from mcp_unknown_keys import Auditor

CALL = {
    "source_timezone": "UTC",
    "time": "12:00",
    "target_timezone": "Asia/Tokyo",
    "target_timzone": "Europe/Paris",
}


def run_agent(wrap):
    """Runs one agent turn: the model calls convert_time with an undeclared
    key, then answers with what the tool returned. Returns the answer and
    the tools the model was shown."""
    framework("pydantic_ai", "pydantic-ai-slim[mcp]==2.68.0")
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    shown: list[str] = []

    def model(messages, info):
        shown[:] = sorted(tool.name for tool in info.function_tools)
        returned = [part for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
        if not returned:
            return ModelResponse(parts=[ToolCallPart("convert_time", dict(CALL), tool_call_id="call_1")])
        return ModelResponse(parts=[TextPart(str(returned[-1].content))])

    server = MCPToolset(StdioTransport(time_server(), ["--local-timezone", "UTC"]))
    agent = Agent(FunctionModel(model), toolsets=[wrap(server)])
    anyio = framework("anyio", "pydantic-ai-slim[mcp]==2.68.0")
    result = anyio.run(agent.run, "What time is it in Tokyo at noon UTC?")
    return result.output, shown


def test_calls_to_an_mcp_toolset_are_audited_and_run_unchanged():
    framework("pydantic_ai", "pydantic-ai-slim[mcp]==2.68.0")
    from mcp_unknown_keys.pydantic_ai import AuditedToolset

    recorded = Recorded()
    auditor = Auditor(on_warn=recorded)
    audited_answer, shown = run_agent(lambda server: AuditedToolset(server, auditor=auditor))
    plain_answer, _ = run_agent(lambda server: server)

    assert "convert_time" in shown
    assert auditor.tools == shown
    [warning] = recorded.warnings
    assert (warning.tool, warning.unknown_keys, warning.id) == ("convert_time", ["target_timzone"], "call_1")
    assert audited_answer == plain_answer
    assert "Asia/Tokyo" in audited_answer
    assert auditor.coverage.audited == 1


def test_any_toolset_is_audited_function_tools_too():
    framework("pydantic_ai", "pydantic-ai-slim==2.68.0")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.toolsets import FunctionToolset

    from mcp_unknown_keys.pydantic_ai import AuditedToolset

    received: list[dict] = []

    def search(query: str, **options: str) -> str:
        """Searches, with options passed on to the engine."""
        received.append({"query": query, **options})
        return "found"

    def model(messages, info):
        if len(messages) == 1:
            call = {"query": "tokyo", "lang": "ja"}
            return ModelResponse(parts=[ToolCallPart("search", call, tool_call_id="call_2")])
        return ModelResponse(parts=[TextPart("done")])

    recorded = Recorded()
    toolset = AuditedToolset(FunctionToolset([search]), auditor=Auditor(on_warn=recorded))
    result = Agent(FunctionModel(model), toolsets=[toolset]).run_sync("search")

    assert result.output == "done"
    assert received == [{"query": "tokyo", "lang": "ja"}]
    # `lang` reaches the tool through **options, which no schema declares.
    assert [(w.tool, w.unknown_keys, w.id) for w in recorded.warnings] == [("search", ["lang"], "call_2")]
