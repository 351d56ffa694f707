"""A small MCP server over streamable HTTP, on the official Python SDK, for
the tests of `McpServer::http`.

It binds 127.0.0.1 on a port the system picks, prints that port on its
first stdout line, and serves at /mcp until it is killed or its stdin is
closed (so a test that dies does not leave it behind). With
`--tls CERT KEY`, it serves https.
"""

import argparse
import os
import socket
import sys
import threading

import uvicorn
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("http-test", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Answer the text as it came."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def header(name: str, ctx: Context) -> str:
    """Answer the value of a header of this HTTP request ("" when absent)."""
    request = ctx.request_context.request
    return request.headers.get(name, "") if request is not None else ""


def exit_when_stdin_closes() -> None:
    sys.stdin.read()
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    options = parser.parse_args()
    # Binding here rather than in uvicorn gives the port before serving.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(sock.getsockname()[1], flush=True)

    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    app = server.streamable_http_app(host="127.0.0.1")
    tls = {"ssl_certfile": options.tls[0], "ssl_keyfile": options.tls[1]} if options.tls else {}
    config = uvicorn.Config(app, log_level="warning", **tls)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
