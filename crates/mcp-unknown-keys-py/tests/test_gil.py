"""The GIL is released for the Rust core's heavy work: other Python threads run meanwhile."""

from __future__ import annotations

import json
import sys
import threading

import pytest

from mcp_unknown_keys import Auditor

# Generous: the waiting thread runs as soon as it is given the GIL.
JOIN_TIMEOUT_S = 60


def catalogue_of(tools: int) -> list[dict]:
    properties = {f"p{n}": {"type": "string", "description": "x" * 40} for n in range(12)}
    return [{"name": f"tool_{n}", "inputSchema": {"type": "object", "properties": properties}} for n in range(tools)]


@pytest.mark.parametrize(("method", "as_text"), [("replace_catalog", False), ("replace_catalog", True), ("list_page", False)])
def test_a_catalogue_is_built_with_the_gil_released(method, as_text):
    # Python never takes the GIL from a thread that does not give it up
    # (the switch interval is set beyond the test's length), so the waiting
    # thread runs during the call only if the call releases the GIL. The
    # call is made a few times, to give the waiting thread time to be
    # woken; without a release it never runs, however often.
    auditor = Auditor(on_warn=lambda warning: None)
    tools = json.dumps(catalogue_of(2_000)) if as_text else catalogue_of(2_000)
    list_tools = getattr(auditor, method)
    kwargs = {"first": True, "more": False} if method == "list_page" else {}
    go = threading.Event()
    ran_during: list[int] = []
    attempt = [0]

    def wait_for_the_gil() -> None:
        go.wait()
        ran_during.append(attempt[0])

    thread = threading.Thread(target=wait_for_the_gil)
    thread.start()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1_000)
    try:
        go.set()
        for attempt[0] in range(1, 21):
            list_tools(tools, **kwargs)
            if ran_during:
                break
        ran = list(ran_during)
    finally:
        sys.setswitchinterval(interval)
        thread.join(JOIN_TIMEOUT_S)
    assert ran, "no other thread ran while 20 catalogues were built: the GIL was held"
    assert auditor.tools[:2] == ["tool_0", "tool_1"]
