"""A streamable-HTTP MCP server on the official Python SDK, for the tests of
`proxy --url` and `proxy --listen`. It serves both protocol eras on one
endpoint (the SDK's own dual-era support): 2025 sessions with the GET
stream and resumable SSE streams (an in-memory event store), and
2026-07-28 stateless requests.

Usage: python remote_server.py [--tls CERT KEY]

Binds 127.0.0.1 on a port the system picks, prints that port on its first
stdout line, and serves at /mcp until it is killed or its stdin is closed.
"""

import argparse
import itertools
import os
import socket
import sys
import threading
from typing import Annotated

import anyio
import uvicorn
from pydantic import Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventMessage, EventStore

server = MCPServer("remote-test", log_level="WARNING")
release = anyio.Event()


class MemoryEventStore(EventStore):
    """Every event kept, so a dropped stream can be replayed."""

    def __init__(self):
        self.events = []  # (event_id, stream_id, message)
        self.ids = itertools.count(1)

    async def store_event(self, stream_id, message):
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        found = [i for i, (event_id, _, _) in enumerate(self.events) if event_id == last_event_id]
        if not found:
            return None
        stream_id = self.events[found[0]][1]
        for event_id, stream, message in self.events[found[0] + 1 :]:
            if stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


@server.tool()
def echo(text: str) -> str:
    """Answer the text as it came."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def regional(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], query: str) -> str:
    """A tool whose region travels in the Mcp-Param-Region header (2026-07-28)."""
    return f"{region}: {query}"


@server.tool()
async def slow(ctx: Context, note: str = "") -> str:
    """Report progress, then wait until `release` is called before answering.
    `note` is declared so that a call to `slow` is audited."""
    await ctx.report_progress(1, 2, "started")
    await release.wait()
    return "released"


@server.tool(name="release")
def release_slow() -> str:
    """Let `slow` answer."""
    release.set()
    return "ok"


@server.tool()
async def drop_stream(ctx: Context) -> str:
    """Report progress, close the answer's stream, then answer: the client
    must resume the stream to get the answer."""
    await ctx.report_progress(1, 2, "before the drop")
    await ctx.close_sse_stream()
    await anyio.sleep(0.3)
    await ctx.report_progress(2, 2, "after the drop")
    return "resumed"


@server.tool()
async def changed(ctx: Context) -> str:
    """Send notifications/tools/list_changed on the session's own stream."""

    session = ctx.session

    async def later():
        await anyio.sleep(0.2)
        await session.send_tool_list_changed()

    server.session_manager._task_group.start_soon(later)
    return "soon"


@server.tool()
async def end_session(ctx: Context) -> str:
    """End this session on the server's side, a moment after answering."""
    request = ctx.request_context.request
    session_id = request.headers.get("mcp-session-id") if request is not None else None
    manager = server.session_manager

    async def later():
        await anyio.sleep(0.2)
        transport = manager._server_instances.get(session_id)
        if transport is not None:
            await transport.terminate()
            manager._server_instances.pop(session_id, None)

    manager._task_group.start_soon(later)
    return "ending"


@server.tool()
def sessions() -> str:
    """How many sessions are open (not ended by DELETE or by the server)."""
    instances = server.session_manager._server_instances.values()
    return str(sum(1 for transport in instances if not transport.is_terminated))


def exit_when_stdin_closes() -> None:
    sys.stdin.read()
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    options = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    print(sock.getsockname()[1], flush=True)

    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    app = server.streamable_http_app(host="127.0.0.1", event_store=MemoryEventStore(), retry_interval=100)
    tls = {}
    if options.tls:
        tls = {"ssl_certfile": options.tls[0], "ssl_keyfile": options.tls[1]}
    config = uvicorn.Config(app, log_level="warning", **tls)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
