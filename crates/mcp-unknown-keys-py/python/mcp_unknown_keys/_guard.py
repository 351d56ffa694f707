"""The adapters' one promise: the alarm never changes, rejects or delays a call."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

logger = logging.getLogger("mcp_unknown_keys")


def quietly(what: str, step: Callable[..., Any], *args: Any) -> None:
    """Runs one step of the alarm; an exception in it is logged and swallowed.

    The framework's call goes on exactly as it would have without the alarm:
    a broken alarm costs a warning, never a call.
    """
    try:
        step(*args)
    except Exception:
        logger.exception("mcp-unknown-keys: %s failed; the call goes on unaudited", what)


def require(framework: str, package: str) -> ImportError:
    """The error an adapter raises when its framework is not installed."""
    return ImportError(
        f"mcp_unknown_keys.{framework} needs the {package} package: pip install {package}"
    )
