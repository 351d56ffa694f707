"""Drives an MCP server through the official Python SDK client.

Usage: python sdk_client.py SPEC_JSON

SPEC_JSON: {"command": str, "args": [str], "stderr": path,
            "call": {"name": str, "arguments": {...}}, "repeat": int}

Initialises a session, lists the tools, makes the call `repeat` times and
prints one JSON object: the tool names and each call's outcome.
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(spec):
    params = StdioServerParameters(command=spec["command"], args=spec["args"])
    report = {"results": []}
    with open(spec["stderr"], "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                listing = await session.list_tools()
                report["tools"] = sorted(tool.name for tool in listing.tools)
                call = spec["call"]
                for _ in range(spec.get("repeat", 2)):
                    result = await session.call_tool(call["name"], call["arguments"])
                    text = " ".join(getattr(block, "text", "") for block in result.content)
                    report["results"].append({"is_error": bool(result.is_error), "text": text})
    print(json.dumps(report))


anyio.run(main, json.loads(sys.argv[1]))
