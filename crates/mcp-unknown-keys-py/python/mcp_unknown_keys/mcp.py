"""The official MCP SDK's ``ClientSession``, audited.

>>> session = AuditedSession(session)          # inside `async with ClientSession(...)`
>>> await session.list_tools()                 # each page feeds the catalogue
>>> await session.call_tool("get_current_time", {"timezone": "UTC", "tz": "x"})  # audited, then sent as it is

Every other attribute is the wrapped session's own. The call is audited before
it is sent (well under a microsecond for a small call), and nothing is changed.
"""

from __future__ import annotations

from typing import Any

from ._guard import quietly
from ._native import Auditor

__all__ = ["AuditedSession"]


class AuditedSession:
    """Wraps an MCP ``ClientSession`` (or the SDK's ``Client``).

    ``list_tools`` feeds each page of the listing to the auditor (a page
    answering a request without a cursor opens a new listing); ``call_tool``
    audits the call against it before sending it unchanged. One auditor per
    server: its catalogue is that server's listing.
    """

    def __init__(self, session: Any, auditor: Auditor | None = None) -> None:
        self.session = session
        self.auditor = auditor if auditor is not None else Auditor()

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any:
        result = await self.session.list_tools(*args, **kwargs)
        quietly("reading a tools listing", self._listed, result, _cursor(args, kwargs))
        return result

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        quietly("auditing a tool call", self.auditor.audit, name, arguments)
        return await self.session.call_tool(name, arguments, *args, **kwargs)

    def _listed(self, result: Any, cursor: Any) -> None:
        next_cursor = getattr(result, "next_cursor", getattr(result, "nextCursor", None))
        self.auditor.list_page(result, first=cursor is None, more=next_cursor is not None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.session, name)

    async def __aenter__(self) -> AuditedSession:
        await self.session.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self.session.__aexit__(*exc_info)

    def __repr__(self) -> str:
        return f"AuditedSession({self.session!r}, {self.auditor!r})"


def _cursor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The cursor a ``list_tools`` request carried: ``params.cursor`` (SDK 2),
    or the ``cursor`` argument (SDK 1)."""
    params = kwargs.get("params")
    if params is not None:
        return getattr(params, "cursor", None)
    return kwargs.get("cursor", args[0] if args else None)
