"""One auditor shared by threads, and called back into from its own callbacks.

A deadlock here would hang the interpreter with the GIL held, so each
scenario runs in a child interpreter with a timeout: the test fails, it
never hangs.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import pytest

from mcp_unknown_keys import Auditor

# Generous: each scenario takes well under a second when nothing deadlocks.
DEADLOCK_TIMEOUT_S = 60
# Rounds of a race that an install in no order lost in nearly every round.
ORDERING_ROUNDS = 20

PRELUDE = """
import threading, time
from mcp_unknown_keys import Auditor

SEARCH = {"name": "search", "inputSchema": {"properties": {"q": {}}}}
REMOTE = {"name": "fetch", "inputSchema": {"$ref": "https://example.com/fetch.json"}}

class SlowListing:
    '''A pydantic-like listing whose model_dump lets other threads run.'''
    def __init__(self, inside):
        self.inside = inside
    def model_dump(self, **kwargs):
        self.inside.set()
        time.sleep(0.3)
        return {"tools": [SEARCH]}
"""


def run_alone(scenario: str) -> None:
    """Runs `scenario` in a child interpreter; fails if it deadlocks or fails."""
    code = PRELUDE + textwrap.dedent(scenario) + "\nprint('done')\n"
    try:
        child = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=DEADLOCK_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"deadlocked: no end within {DEADLOCK_TIMEOUT_S} s", pytrace=False)
    assert child.returncode == 0, child.stderr
    assert child.stdout.endswith("done\n"), child.stdout + child.stderr


@pytest.mark.parametrize("method", ["list_page", "replace_catalog"])
def test_two_threads_listing_at_once_do_not_deadlock(method):
    # The first thread's listing runs Python (model_dump) that lets the
    # second thread in; the second lists too. Had the first held a lock
    # while in Python, the second would wait for it with the GIL held.
    run_alone(f"""
        auditor = Auditor(on_warn=lambda warning: None)
        inside = threading.Event()
        def first():
            if "{method}" == "list_page":
                auditor.list_page(SlowListing(inside), first=True, more=False)
            else:
                auditor.replace_catalog(SlowListing(inside))
        thread = threading.Thread(target=first)
        thread.start()
        inside.wait()
        auditor.list_page([SEARCH], first=True, more=False)
        thread.join()
        assert auditor.tools == ["search"], auditor.tools
        assert auditor.audit("search", {{"q": "x", "limit": 1}}).unknown_keys == ["limit"]
    """)


@pytest.mark.parametrize("newer", ["list_page", "replace_catalog", "clear_catalog"])
def test_the_newest_catalogue_stays_whichever_thread_installs_last(newer):
    # One thread closes a listing with a large last page while another
    # decides a newer catalogue. In either order the newer one is what
    # stays: taken first, it leaves the large page a page of a listing
    # abandoned (passed over); taken second, it replaces it. The large page
    # takes long to install, so without ordering it would be installed last
    # and an older listing would replace the newer catalogue.
    run_alone(
        """
        LARGE = [
            {"name": f"tool{n}", "inputSchema": {"properties": {f"k{i}": {} for i in range(8)}}}
            for n in range(3000)
        ]
        expected = [] if NEWER == "clear_catalog" else ["search"]
        for round in range(ROUNDS):
            auditor = Auditor(on_warn=lambda warning: None)
            auditor.list_page([REMOTE], first=True, more=True)
            started = threading.Event()
            def close_listing():
                started.set()
                auditor.list_page(LARGE, first=False, more=False)
            thread = threading.Thread(target=close_listing)
            thread.start()
            started.wait()
            # Lets the large page be taken first, most rounds: the order
            # that lost without stamps. Either order must pass.
            time.sleep(0.005)
            if NEWER == "list_page":
                auditor.list_page([SEARCH], first=True, more=False)
            elif NEWER == "replace_catalog":
                auditor.replace_catalog([SEARCH])
            else:
                auditor.clear_catalog()
            thread.join()
            assert auditor.tools == expected, f"round {round}: {len(auditor.tools)} tools, an older listing's"
        """.replace("NEWER", repr(newer)).replace("ROUNDS", str(ORDERING_ROUNDS))
    )


def test_a_note_callback_may_call_the_auditor_back():
    # The note about `fetch` is said from inside list_page; the callback
    # reads and changes the auditor it was handed by.
    run_alone("""
        heard = []
        def on_note(tool, note):
            heard.append((tool, auditor.tools))
            auditor.list_page([SEARCH], first=True, more=False)
        auditor = Auditor(on_warn=lambda warning: None, on_note=on_note)
        auditor.list_page([REMOTE], first=True, more=False)
        assert heard == [("fetch", ["fetch"])], heard
        assert auditor.tools == ["search"], auditor.tools
    """)


def test_a_warning_callback_may_call_the_auditor_back():
    run_alone("""
        def on_warn(warning):
            if warning.unknown_keys == ["limit"]:
                auditor.list_page([SEARCH, REMOTE], first=True, more=False)
                assert auditor.audit("search", {"q": "y", "page": 2}).unknown_keys == ["page"]
        auditor = Auditor(on_warn=on_warn, on_note=lambda tool, note: None)
        auditor.replace_catalog([SEARCH])
        assert auditor.audit("search", {"q": "x", "limit": 1}).unknown_keys == ["limit"]
        assert auditor.tools == ["fetch", "search"], auditor.tools
        assert auditor.coverage.calls == 2
    """)


def test_threads_auditing_and_listing_at_once_count_every_call():
    auditor = Auditor(on_warn=lambda warning: None)
    search = {"name": "search", "inputSchema": {"properties": {"q": {}}}}
    auditor.replace_catalog([search])
    calls_per_thread = 2_000

    def audit() -> None:
        for n in range(calls_per_thread):
            auditor.audit("search", {"q": "x", f"k{n % 7}": n})

    def list_again() -> None:
        for _ in range(200):
            auditor.list_page([search], first=True, more=False)

    threads = [threading.Thread(target=audit) for _ in range(3)] + [threading.Thread(target=list_again)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(DEADLOCK_TIMEOUT_S)
        assert not thread.is_alive(), "deadlocked"
    assert auditor.coverage.calls == 3 * calls_per_thread
    assert auditor.coverage.audited == 3 * calls_per_thread
