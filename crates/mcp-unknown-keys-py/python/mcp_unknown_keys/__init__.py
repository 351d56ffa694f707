"""The alarm for arguments a tool never declared, on the mcp-unknown-keys Rust core.

A model's tool call can carry keys its tool never declared: truncated
generations, lossy re-serialisation, invented parameters. Servers ignore them
and do part of the job. An :class:`Auditor` compares each call's keys with the
tool's declared ``properties`` and reports each undeclared (tool, key) pair
once, without ever changing, rejecting or delaying the call.

>>> from mcp_unknown_keys import Auditor
>>> auditor = Auditor(on_warn=lambda warning: None)
>>> auditor.replace_catalog([{"name": "fs_read", "inputSchema": {"properties": {"path": {}, "offset": {}}}}])
>>> auditor.audit("fs_read", {"path": "a", "ffset": 12}).unknown_keys
['ffset']

:class:`Session` is for hosts that also see the server's answers: fed every
JSON-RPC message of a session, it keeps the listings itself, audits the calls
and says what the server did with each call that carried undeclared keys
(``ignored``, ``rejected``, ``unanswered``, ``ambiguous``), as the proxy does.

:func:`audit_file` audits what logs already recorded, as the
``mcp-unknown-keys audit`` command does, and returns a :class:`Report`;
:func:`audit_records` and :func:`audit_arrow` audit records one by one (Python
values, JSON text, an Arrow column), and reports of partitions add up
(:meth:`Report.merge`): :mod:`mcp_unknown_keys.ray` and
:mod:`mcp_unknown_keys.spark` audit a corpus on those engines. Adapters for agent frameworks live
in submodules, each importing its
framework only when imported: :mod:`mcp_unknown_keys.mcp` (the MCP SDK's
``ClientSession``), :mod:`mcp_unknown_keys.pydantic_ai`,
:mod:`mcp_unknown_keys.openai_agents` and :mod:`mcp_unknown_keys.langchain`.
"""

from ._native import Auditor, Coverage, Report, Session, Warning, __version__, audit_file, audit_records


def audit_arrow(*args: object, **kwargs: object) -> Report:
    """Audits the records of an Arrow column in place: :func:`mcp_unknown_keys.arrow.audit_arrow`."""
    from .arrow import audit_arrow as audit

    return audit(*args, **kwargs)  # type: ignore[arg-type]


__all__ = [
    "Auditor",
    "Coverage",
    "Report",
    "Session",
    "Warning",
    "__version__",
    "audit_arrow",
    "audit_file",
    "audit_records",
]
