"""``python -m mcp_unknown_keys``: runs the ``mcp-unknown-keys`` command.

A wheel built by ``scripts/build-wheel`` carries the command line as a
binary that pip puts beside the interpreter's scripts (``bin/`` or
``Scripts\\``); this finds it there, as ruff's and uv's packages find theirs,
and runs it in this process's place. A package built from source
(``pip install ./crates/mcp-unknown-keys-py``) has the module only: the
binary then comes from ``cargo install``, and is looked for on ``PATH``.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig

COMMAND = "mcp-unknown-keys"


def find_bin() -> str:
    """The path of the ``mcp-unknown-keys`` binary: the one this package's
    wheel installed, else the one on ``PATH``.

    Raises ``FileNotFoundError`` naming every place looked in.
    """
    name = COMMAND + (sysconfig.get_config_var("EXE") or "")
    places = [sysconfig.get_path("scripts"), sysconfig.get_path("scripts", vars={"base": sys.base_prefix})]
    # `pip install --user`: the user scheme's scripts (sysconfig has it from Python 3.10).
    places.append(sysconfig.get_path("scripts", scheme=sysconfig.get_preferred_scheme("user")))
    for place in places:
        candidate = os.path.join(place, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    on_path = shutil.which(COMMAND)
    if on_path is not None:
        return on_path
    raise FileNotFoundError(
        f"the {COMMAND} binary is not installed: looked in {', '.join(places)} and PATH. "
        "Wheels from PyPI carry it; a package built from source does not (cargo install mcp-unknown-keys-cli)"
    )


def _run() -> None:
    binary = find_bin()
    if sys.platform == "win32":
        import subprocess

        try:
            completed = subprocess.run([binary, *sys.argv[1:]], check=False)
        except KeyboardInterrupt:
            sys.exit(2)
        sys.exit(completed.returncode)
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    _run()
