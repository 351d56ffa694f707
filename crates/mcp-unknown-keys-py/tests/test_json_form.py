"""One rule for a Python value's JSON form: a call's dict reads as its `json.dumps` text does."""

from __future__ import annotations

import json
from enum import IntEnum

from conftest import Recorded

from mcp_unknown_keys import Auditor

SEARCH = {"name": "search", "inputSchema": {"properties": {"q": {}, "filters": {"properties": {"lang": {}}}}}}


class Level(IntEnum):
    HIGH = 3


class Ratio(float):
    def __repr__(self) -> str:
        return "Ratio(...)"


def audited(arguments):
    auditor = Auditor(on_warn=Recorded())
    auditor.replace_catalog([SEARCH])
    warning = auditor.audit("search", arguments, id=1)
    return warning.to_dict(), auditor.coverage


def test_a_dict_reads_as_its_json_dumps_text():
    # Keys of every type json.dumps writes, as it writes them: an IntEnum
    # member by its number, floats by float.__repr__ (Infinity, NaN), an
    # integer beyond 64 bits in full; and values of every JSON type.
    odd_keys = {
        Level.HIGH: 1,
        float("inf"): 2,
        -float("inf"): 3,
        float("nan"): 4,
        Ratio(0.5): 5,
        1e16: 6,
        10**40: 7,
        True: 8,
        None: 9,
        "caf\u00e9": 10,
    }
    values = {"q": "x", "filters": {"lang": "en", "region": (1, 2.5, None, [True])}, "big": 10**30}
    arguments = {**values, **odd_keys}
    from_dict, from_text = audited(arguments), audited(json.dumps(arguments))
    assert from_dict == from_text
    warning, coverage = from_dict
    assert sorted(warning["unknown_keys"]) == sorted(
        ["3", "Infinity", "-Infinity", "NaN", "0.5", "1e+16", "1" + "0" * 40, "true", "null", "caf\u00e9", "big"]
    )
    assert warning["unknown_paths"] == ["filters.region"]
    assert (coverage.calls, coverage.audited) == (1, 1)
