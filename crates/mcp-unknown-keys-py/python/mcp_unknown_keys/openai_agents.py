"""The OpenAI Agents SDK: run hooks that audit every function tool call, MCP tools included.

>>> from agents import Runner
>>> from mcp_unknown_keys.openai_agents import AuditHooks
>>> result = await Runner.run(agent, "…", hooks=AuditHooks())

The SDK turns each of an agent's MCP tools into a function tool, so one hook
sees the calls its MCP servers and its function tools receive: the arguments
as the model wrote them (``ToolContext.tool_arguments``, JSON text), audited
against the schema the model was shown (``params_json_schema``), just before
the tool runs.
"""

from __future__ import annotations

from typing import Any

from ._guard import quietly, require
from ._native import Auditor

try:
    from agents import RunHooks
except ImportError as error:  # pragma: no cover - depends on the environment
    raise require("openai_agents", "openai-agents") from error

__all__ = ["AuditHooks"]


class AuditHooks(RunHooks[Any]):
    """Audits each function tool call of a run; changes, rejects and delays none.

    The catalogue is built from the tools as they are called (each tool's
    schema read once), so no listing is requested from an MCP server. To
    keep hooks of your own, subclass this and call ``super().on_tool_start``,
    or call ``audit(context, tool)`` from yours.
    """

    def __init__(self, auditor: Auditor | None = None) -> None:
        super().__init__()
        self.auditor = auditor if auditor is not None else Auditor()
        self._schemas: dict[str, Any] = {}

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        quietly("auditing a tool call", self.audit, context, tool)

    def audit(self, context: Any, tool: Any) -> None:
        """Audits the call ``context`` (a ``ToolContext``) makes to ``tool``."""
        arguments = getattr(context, "tool_arguments", None)
        if arguments is None:
            # A hosted, computer or shell tool: no JSON arguments to audit.
            return
        name = getattr(context, "tool_name", None) or tool.name
        self._know(name, getattr(tool, "params_json_schema", None))
        self.auditor.audit(name, arguments, getattr(context, "tool_call_id", None))

    def _know(self, name: str, schema: Any) -> None:
        if name in self._schemas and self._schemas[name] == schema:
            return
        self._schemas[name] = schema
        self.auditor.replace_catalog(
            [{"name": known, "parameters": known_schema or {}} for known, known_schema in self._schemas.items()]
        )
