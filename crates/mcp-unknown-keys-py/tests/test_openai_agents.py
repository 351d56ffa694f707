"""The OpenAI Agents SDK adapter: a run by a fake Model, over a real MCP server and a function tool."""

from __future__ import annotations

import json

from conftest import Recorded, framework, time_server

from mcp_unknown_keys import Auditor

CONVERT = {
    "source_timezone": "UTC",
    "time": "12:00",
    "target_timezone": "Asia/Tokyo",
    "target_timzone": "Europe/Paris",
}


def run(hooks):
    """One run: the fake model calls an MCP tool and a function tool, each
    with an undeclared key, then answers with what they returned."""
    agents = framework("agents", "openai-agents==0.24.0")
    from agents.items import ModelResponse
    from agents.mcp import MCPServerStdio
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    agents.set_tracing_disabled(True)
    received: list[dict] = []

    @agents.function_tool
    def weather(city: str) -> str:
        """The weather in a city."""
        received.append({"city": city})
        return f"sunny in {city}"

    class FakeModel(Model):
        async def get_response(self, system_instructions, input, model_settings, tools, *args, **kwargs):
            outputs = [item["output"] for item in input if item.get("type") == "function_call_output"]
            if not outputs:
                calls = [
                    ResponseFunctionToolCall(
                        type="function_call", call_id="call_1", name="convert_time", arguments=json.dumps(CONVERT)
                    ),
                    ResponseFunctionToolCall(
                        type="function_call",
                        call_id="call_2",
                        name="weather",
                        arguments=json.dumps({"city": "Tokyo", "units": "metric"}),
                    ),
                ]
                return ModelResponse(output=calls, usage=Usage(), response_id=None)
            text = ResponseOutputText(type="output_text", text=json.dumps(outputs), annotations=[])
            message = ResponseOutputMessage(
                id="msg_1", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):
            raise NotImplementedError("the test runs without streaming")

    async def main():
        params = {"command": time_server(), "args": ["--local-timezone", "UTC"]}
        async with MCPServerStdio(params=params, cache_tools_list=True) as server:
            agent = agents.Agent(name="clock", model=FakeModel(), tools=[weather], mcp_servers=[server])
            result = await agents.Runner.run(agent, "Noon UTC in Tokyo, and the weather?", hooks=hooks)
            return result.final_output

    return framework("anyio", "openai-agents==0.24.0").run(main), received


def test_mcp_and_function_tool_calls_are_audited_and_run_unchanged():
    framework("agents", "openai-agents==0.24.0")
    from agents import RunHooks

    from mcp_unknown_keys.openai_agents import AuditHooks

    recorded = Recorded()
    auditor = Auditor(on_warn=recorded)
    audited, audited_received = run(AuditHooks(auditor))
    plain, plain_received = run(RunHooks())

    assert sorted((w.tool, tuple(w.unknown_keys), w.id) for w in recorded.warnings) == [
        ("convert_time", ("target_timzone",), "call_1"),
        ("weather", ("units",), "call_2"),
    ]
    assert auditor.tools == ["convert_time", "weather"]
    assert auditor.coverage.audited == 2
    assert audited == plain
    assert audited_received == plain_received == [{"city": "Tokyo"}]
    assert "Asia/Tokyo" in audited
