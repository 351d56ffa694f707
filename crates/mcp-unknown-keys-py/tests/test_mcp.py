"""The MCP SDK adapter, against a real MCP server over stdio (mcp-server-time)."""

from __future__ import annotations

from conftest import Recorded, framework, time_server

from mcp_unknown_keys import Auditor


def text_of(result) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def test_a_session_audits_its_calls_against_its_listing_and_sends_them_unchanged():
    mcp = framework("mcp", "mcp==2.3.0")
    from mcp_unknown_keys.mcp import AuditedSession

    recorded = Recorded()
    arguments = {
        "source_timezone": "UTC",
        "time": "12:00",
        "target_timezone": "Asia/Tokyo",
        "target_timzone": "Europe/Paris",
    }
    sent = dict(arguments)

    async def main():
        params = mcp.StdioServerParameters(command=time_server(), args=["--local-timezone", "UTC"])
        async with mcp.client.stdio.stdio_client(params) as (read, write):
            async with AuditedSession(mcp.ClientSession(read, write), Auditor(on_warn=recorded)) as session:
                await session.initialize()  # the session's own, passed through
                before_listing = await session.call_tool("convert_time", arguments)
                listing = await session.list_tools()
                audited = [await session.call_tool("convert_time", arguments) for _ in range(2)]
                plain = await session.session.call_tool("convert_time", dict(arguments))
                return session.auditor, listing, before_listing, audited, plain

    auditor, listing, before_listing, audited, plain = framework("anyio", "mcp==2.3.0").run(main)

    assert auditor.tools == sorted(tool.name for tool in listing.tools)
    assert "convert_time" in auditor.tools
    assert arguments == sent
    [warning] = recorded.warnings
    assert (warning.tool, warning.unknown_keys) == ("convert_time", ["target_timzone"])
    assert warning.hints[0]["suggestion"] == "target_timezone"
    # The server ignored the key and "succeeded": the alarm changed nothing.
    assert not plain.is_error
    assert [text_of(result) for result in audited] == [text_of(plain)] * 2
    assert text_of(before_listing) == text_of(plain)
    coverage = auditor.coverage
    assert (coverage.calls, coverage.audited, coverage.unaudited) == (3, 2, {"no_catalogue": 1})
