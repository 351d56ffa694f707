"""pydantic-ai: a wrapper toolset that audits every call to any toolset.

>>> from pydantic_ai import Agent
>>> from pydantic_ai.mcp import MCPToolset
>>> from mcp_unknown_keys.pydantic_ai import AuditedToolset
>>> agent = Agent("openai:gpt-5", toolsets=[AuditedToolset(MCPToolset("server.py"))])

pydantic-ai validates an MCP tool's arguments with an any-schema, so an
undeclared key reaches the server, which ignores it. The wrapper reads the
tools the model is shown (``get_tools``) and audits each call's arguments as
the wrapped toolset receives them, with the call's ``tool_call_id``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._guard import quietly, require
from ._native import Auditor

try:
    from pydantic_ai.tools import AgentDepsT, RunContext
    from pydantic_ai.toolsets import WrapperToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
except ImportError as error:  # pragma: no cover - depends on the environment
    raise require("pydantic_ai", "pydantic-ai-slim") from error

__all__ = ["AuditedToolset"]


@dataclass
class AuditedToolset(WrapperToolset[AgentDepsT]):
    """Audits each call to the wrapped toolset; changes, rejects and delays none.

    One auditor per toolset: its catalogue is the wrapped toolset's tools
    (wrap a ``CombinedToolset`` to audit several against one catalogue).
    Function tools whose arguments pydantic-ai validates strictly never
    reach the toolset with an undeclared key: pydantic-ai asks the model to
    retry them itself.
    """

    auditor: Auditor = field(default_factory=Auditor)
    _listed: list[dict[str, Any]] | None = field(default=None, init=False, repr=False, compare=False)

    async def get_tools(self, ctx: RunContext[AgentDepsT]) -> dict[str, ToolsetTool[AgentDepsT]]:
        tools = await self.wrapped.get_tools(ctx)
        quietly("reading the tools", self._list, tools)
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDepsT], tool: ToolsetTool[AgentDepsT]
    ) -> Any:
        quietly("auditing a tool call", self.auditor.audit, name, tool_args, ctx.tool_call_id)
        return await self.wrapped.call_tool(name, tool_args, ctx, tool)

    def _list(self, tools: dict[str, ToolsetTool[AgentDepsT]]) -> None:
        listing = [{"name": name, "parameters": tool.tool_def.parameters_json_schema} for name, tool in tools.items()]
        # Every run step lists the tools again: read the schemas only when they change.
        if listing != self._listed:
            self.auditor.replace_catalog(listing)
            self._listed = listing
