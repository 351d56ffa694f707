"""Drives an MCP server through the official Python SDK client.

Usage: python sdk_client.py SPEC_JSON

SPEC_JSON: {"command": str, "args": [str], "stderr": path, "log": path,
            "call": {"name": str, "arguments": {...}}, "repeat": int}

Initialises a session, lists the tools, makes the call `repeat` times and
prints one JSON object: the tool names, each call's outcome, and how many
lines the warnings log had after each call.
"""

import json
import os
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def log_lines(path):
    """Lines in the warnings log, once it has stopped growing.

    The proxy audits a call once it has forwarded it, so its warning may
    land a moment after the answer: wait until the log is quiet.
    """
    count, quiet_since = -1, time.monotonic()
    while time.monotonic() - quiet_since < 0.3:
        now = len(open(path).read().splitlines()) if os.path.exists(path) else 0
        if now != count:
            count, quiet_since = now, time.monotonic()
        time.sleep(0.02)
    return count


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
                    report["results"].append(
                        {"is_error": bool(result.is_error), "text": text, "log_lines": log_lines(spec["log"])}
                    )
    print(json.dumps(report))


anyio.run(main, json.loads(sys.argv[1]))
