"""Drives an MCP server through the official Python SDK client, over stdio
(the bridge, `proxy --url`) or streamable HTTP (the reverse proxy,
`proxy --listen`), in either protocol era.

Usage: python remote_client.py SPEC_JSON

SPEC_JSON: {"stdio": [command, args...]} or {"url": str},
           "mode": "legacy" | "2026-07-28" | "auto",
           "calls": [{"name": str, "arguments": {...}}, ...]

Lists the tools, makes the calls in order, and prints one JSON object: the
protocol version negotiated, the tool names, and each call's outcome.
"""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters


async def main(spec):
    if "stdio" in spec:
        command, *args = spec["stdio"]
        server = StdioServerParameters(command=command, args=args)
    else:
        server = spec["url"]
    report = {"results": []}
    async with Client(server, mode=spec.get("mode", "auto"), cache=None) as client:
        report["version"] = client.session.protocol_version
        listing = await client.list_tools()
        report["tools"] = sorted(tool.name for tool in listing.tools)
        for call in spec["calls"]:
            result = await client.call_tool(call["name"], call["arguments"])
            text = " ".join(getattr(block, "text", "") for block in result.content)
            report["results"].append({"is_error": bool(result.is_error), "text": text})
    print(json.dumps(report))


anyio.run(main, json.loads(sys.argv[1]))
