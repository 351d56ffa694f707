"""LangChain: a callback handler that audits each tool call against the tool's ``args_schema``.

>>> from mcp_unknown_keys.langchain import AuditCallbackHandler
>>> handler = AuditCallbackHandler(tools)
>>> tool.invoke(tool_call, config={"callbacks": [handler]})   # or agent.invoke(..., config=...)

A LangChain tool's pydantic ``args_schema`` ignores keys it does not declare,
so the tool runs without them. The handler reads each tool's schema as the
model is shown it, and audits the arguments each tool starts with (as the
model wrote them, less the arguments LangChain injects), with the call's
``tool_call_id``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._guard import quietly, require
from ._native import Auditor

try:
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as error:  # pragma: no cover - depends on the environment
    raise require("langchain", "langchain-core") from error

__all__ = ["AuditCallbackHandler"]


class AuditCallbackHandler(BaseCallbackHandler):
    """Audits each tool call; changes, rejects and delays none.

    ``tools``: the tools the model is bound to (LangChain tools, functions,
    pydantic models or declarations: whatever ``convert_to_openai_tool``
    reads). Call ``set_tools`` when they change.
    """

    # Runs in the caller's thread and task: no executor hop, no delay.
    run_inline = True

    def __init__(self, tools: Iterable[Any] = (), auditor: Auditor | None = None) -> None:
        super().__init__()
        self.auditor = auditor if auditor is not None else Auditor()
        self.set_tools(tools)

    def set_tools(self, tools: Iterable[Any]) -> None:
        """Makes ``tools`` the catalogue calls are audited against."""
        self.auditor.replace_catalog([convert_to_openai_tool(tool) for tool in tools])

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = (serialized or {}).get("name") or kwargs.get("name") or ""
        quietly("auditing a tool call", self.auditor.audit, name, inputs, kwargs.get("tool_call_id"))
