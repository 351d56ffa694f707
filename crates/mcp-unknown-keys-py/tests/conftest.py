"""What every test here shares: the frameworks, found or failed for, and the time server."""

from __future__ import annotations

import importlib
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

HOW_TO_GET = 'run scripts/test, or eval "$(scripts/test-deps)" then use the venv it prints ($MCP_UK_PYTHON)'


def framework(module: str, package: str) -> ModuleType:
    """Imports a framework a test drives; fails (never skips) saying how to get it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        pytest.fail(f"{package} is not installed ({error}): {HOW_TO_GET}", pytrace=False)


def time_server() -> str:
    """The pinned mcp-server-time (PyPI), a real MCP server over stdio."""
    path = os.environ.get("MCP_UK_SERVER_TIME") or shutil.which(
        "mcp-server-time", path=str(Path(sys.executable).parent)
    )
    if not path or not Path(path).exists():
        pytest.fail(f"mcp-server-time is not installed: {HOW_TO_GET}", pytrace=False)
    return path


class Recorded:
    """An ``on_warn`` that keeps every warning it is handed."""

    def __init__(self) -> None:
        self.warnings: list = []

    def __call__(self, warning) -> None:
        self.warnings.append(warning)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        return [(w.tool, key) for w in self.warnings for key in w.unknown_keys + w.unknown_paths]
