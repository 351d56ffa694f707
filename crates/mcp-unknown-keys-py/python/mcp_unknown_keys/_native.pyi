"""Type stubs of the Rust extension: Auditor, Session, Warning, Coverage, Report, audit_file, audit_records."""

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict, final

from typing_extensions import NotRequired

__version__: str

# Every cause of the Rust `Cause::ALL`, in its order (a Rust test holds them equal).
Cause = Literal[
    "case_variant",
    "plural",
    "abbreviation",
    "truncated",
    "near_miss",
    "fragment",
    "other_tool",
    "injected",
    "invented",
    "undiagnosed",
    "missing_required",
    "emptied",
    "truncated_response",
]
Reason = Literal["no_catalogue", "unlisted_tool", "declares_nothing", "unreadable_arguments"]

class Hint(TypedDict):
    """The likely cause of one unknown key."""

    key: str
    cause: Cause
    suggestion: NotRequired[str]
    declared_by: NotRequired[str]
    seen_on_tools: NotRequired[int]

class MissingKey(TypedDict):
    """A declared key a hint points to that the call did not carry."""

    key: str
    default: NotRequired[Any]

@final
class Warning:
    """A tool was called with keys it never declared: the fields of the JSON line."""

    @property
    def tool(self) -> str: ...
    @property
    def unknown_keys(self) -> list[str]: ...
    @property
    def declared_keys(self) -> list[str]: ...
    @property
    def id(self) -> str: ...
    @property
    def hints(self) -> list[Hint]: ...
    @property
    def missing_keys(self) -> list[MissingKey]: ...
    @property
    def unknown_paths(self) -> list[str]: ...
    @property
    def missing_required(self) -> list[str]: ...
    @property
    def missing_cause(self) -> Cause | None: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...

@final
class Coverage:
    """Every call an auditor found: audited, or unaudited for a named reason."""

    @property
    def calls(self) -> int: ...
    @property
    def audited(self) -> int: ...
    @property
    def unaudited(self) -> dict[Reason, int]: ...
    @property
    def unlisted_tools(self) -> dict[str, int]: ...
    @property
    def is_complete(self) -> bool: ...
    def to_dict(self) -> dict[str, Any]: ...
    def to_json(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...

@final
class Auditor:
    """Audits tool calls against the latest catalogue; says each undeclared pair once."""

    def __init__(
        self,
        on_warn: Callable[[Warning], object] | None = None,
        allow: Iterable[str] | None = None,
        top_level_only: bool = False,
        on_note: Callable[[str, str], object] | None = None,
        no_missing: bool = False,
    ) -> None: ...
    def replace_catalog(self, tools: object) -> None: ...
    def list_page(self, tools: object, *, first: bool, more: bool) -> None: ...
    def clear_catalog(self) -> None: ...
    @property
    def tools(self) -> list[str]: ...
    @property
    def audited_tools(self) -> list[str]: ...
    @property
    def notes(self) -> list[tuple[str, str]]: ...
    def audit(
        self,
        tool: str,
        arguments: dict[str, Any] | str | bytes | bytearray | None,
        id: str | int | None = None,
    ) -> Warning | None: ...
    @property
    def coverage(self) -> Coverage: ...

class Verdict(TypedDict):
    """What the server did with a call that carried undeclared keys: the JSON line a door logs."""

    verdict: Literal["ignored", "rejected", "unanswered", "ambiguous"]
    tool: str
    id: str
    unknown_keys: list[str]
    unknown_paths: NotRequired[list[str]]
    missing_required: NotRequired[list[str]]

@final
class Session:
    """One MCP session: the host's messages and the server's answers in, warnings and verdicts out."""

    def __init__(
        self,
        on_warn: Callable[[Warning], object] | None = None,
        allow: Iterable[str] | None = None,
        top_level_only: bool = False,
        on_note: Callable[[str, str], object] | None = None,
        on_verdict: Callable[[Verdict], object] | None = None,
        no_missing: bool = False,
    ) -> None: ...
    # `message`: a JSON-RPC message or batch as `json.loads` gives it, a
    # pydantic model (`JSONRPCMessage`), or its JSON text.
    def from_host(self, message: object) -> list[Warning]: ...
    def from_server(self, message: object) -> list[Warning]: ...
    def finish(self) -> list[Verdict]: ...
    @property
    def coverage(self) -> Coverage: ...
    @property
    def verdicts(self) -> list[Verdict]: ...
    @property
    def tools(self) -> list[str]: ...
    @property
    def audited_tools(self) -> list[str]: ...

class Lines(TypedDict):
    """The lines read, blank ones aside, and what became of them."""

    read: int
    not_json: int
    not_utf8: int
    too_deep: int
    too_long: int
    idle: int

Dimension = Literal["model", "tool", "key", "cause", "file"]

class Group(TypedDict):
    """One group of calls, as `audit --by` prints it: highest rate first."""

    group: dict[str, str]
    calls: int
    audited: int
    calls_with_unknown_keys: int
    per_1000_audited: float | None
    unknown_keys: dict[str, int]
    causes: dict[str, int]
    from_proxy_log: NotRequired[bool]

class Finding(TypedDict):
    """One undeclared (tool, key) pair and the calls that carried it."""

    tool: str
    key: str
    nested: bool
    calls: int
    first_id: str
    cause: NotRequired[str]
    declared_keys: list[str]

@final
class Report:
    """What an audit found: warnings, coverage, findings, groups, and the lines that could not be read."""

    @property
    def warnings(self) -> list[Warning]: ...
    @property
    def coverage(self) -> Coverage: ...
    @property
    def lines(self) -> Lines: ...
    @property
    def unreadable_lines(self) -> int: ...
    @property
    def incomplete_inputs(self) -> int: ...
    @property
    def notices(self) -> list[str]: ...
    @property
    def is_complete(self) -> bool: ...
    @property
    def findings(self) -> list[Finding]: ...
    def by(self, *dimensions: Dimension) -> list[Group]:
        """The calls grouped by one dimension, or by those the audit's `by=...` named."""
    def merge(self, other: Report) -> Report:
        """This report and `other` added up: counts summed, each undeclared pair said once.

        A `ValueError` when the audits were given different options (tools, allow, top_level_only, no_missing, by) or a count
        would pass 2**64 - 1.
        """
    def to_json(self) -> str: ...
    @classmethod
    def from_json(cls, text: str) -> Report:
        """A report read back from `to_json`'s text, within a report's bounds, its counts checked (`ValueError`)."""
    def __eq__(self, other: object) -> bool: ...

def audit_file(
    path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    tools: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    allow: Iterable[str] | None = None,
    top_level_only: bool = False,
    no_missing: bool = False,
    by: Sequence[Dimension] | None = None,
) -> Report:
    """Audits recorded logs as `mcp-unknown-keys audit` does: warnings, coverage, lines read."""

def audit_records(
    records: Iterable[object],
    tools: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    allow: Iterable[str] | None = None,
    top_level_only: bool = False,
    no_missing: bool = False,
    by: Sequence[Dimension] | None = None,
    name: str = "records",
) -> Report:
    """Audits records one by one (dicts or JSON text), each an input of its own."""

def audit_arrow_arrays(
    arrays: Sequence[tuple[object, object, Sequence[int]]],
    tools: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any] | None = None,
    *,
    allow: Iterable[str] | None = None,
    top_level_only: bool = False,
    no_missing: bool = False,
    by: Sequence[Dimension] | None = None,
    name: str = "records",
    names: Sequence[tuple[object, object, Sequence[int]]] | None = None,
) -> Report:
    """`audit_arrow`'s native half: each array as the capsules of `__arrow_c_array__()` and its buffers' lengths."""
