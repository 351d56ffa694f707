"""The test venv holds the pinned versions: every package, transitive ones included."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

CONSTRAINTS = Path(__file__).resolve().parent.parent / "constraints.txt"
# The venv's own tools, and the package under test (built from this tree).
NOT_PINNED = {"pip", "setuptools", "mcp-unknown-keys"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned() -> dict[str, str]:
    assert CONSTRAINTS.is_file(), f"{CONSTRAINTS.name} is missing: the transitive test dependencies are unpinned"
    pins = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{CONSTRAINTS.name}: {line!r} is not pinned with =="
            pins[normalized(name)] = version
    return pins


def test_every_installed_package_is_pinned_at_its_version():
    pins = pinned()
    installed = {
        normalized(dist.metadata["Name"]): dist.version
        for dist in importlib.metadata.distributions()
        if normalized(dist.metadata["Name"]) not in NOT_PINNED
    }
    unpinned = sorted(set(installed) - set(pins))
    assert not unpinned, f"installed but not in {CONSTRAINTS.name}: {unpinned} (regenerate it: see its header)"
    drifted = {name: (version, pins[name]) for name, version in installed.items() if pins[name] != version}
    assert not drifted, f"installed (left) is not the pinned version (right): {drifted}"
