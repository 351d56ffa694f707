"""What auditing a call costs a Python host, side by side with what it already pays.

Run it from the test venv (scripts/test-deps installs the package's
comparisons, pinned):

    python crates/mcp-unknown-keys-py/bench/bench.py [--quick]

Each row is timed with timeit in the same run, interleaved: every round times
each row once, and each row's figure is its best round (the least disturbed
by the rest of the machine), per call. Every call is clean (all its keys
declared), as nearly every call is: the cost the alarm adds to each call.

- audit(dict): ``Auditor.audit`` given the arguments as a dict, keys read in place;
- audit(str): the same given the JSON text;
- json.loads: parsing that text, which a host does once anyway;
- jsonschema: ``Draft202012Validator(schema).is_valid(dict)``, the validator
  compiled once, the schema closed with ``additionalProperties: false``;
- pydantic: ``model_validate(dict)`` of a model with ``extra='forbid'``.

The nested rows audit a call whose tool declares nested shapes (an array of
objects): there a dict's values are converted once for the core's nested scan.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import platform
import sys
import timeit

import jsonschema
import pydantic

import mcp_unknown_keys
from mcp_unknown_keys import Auditor

FLAT_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "offset": {"type": "integer"},
        "limit": {"type": "integer"},
        "encoding": {"type": "string"},
    },
    "required": ["path"],
    "additionalProperties": False,
}
FLAT_CALL = {"path": "src/app/handlers/requests.rs", "offset": 1200, "limit": 40, "encoding": "utf-8", "reason": "entry"}

NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "kind": {"type": "string"}},
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}
NESTED_CALL = {"entities": [{"name": "Ada Lovelace", "kind": "mathematician"}, {"name": "Rust lang", "kind": "language"}]}


class FlatModel(pydantic.BaseModel, extra="forbid"):
    path: str
    offset: int | None = None
    limit: int | None = None
    encoding: str | None = None
    reason: str | None = None


class Entity(pydantic.BaseModel, extra="forbid"):
    name: str
    kind: str


class NestedModel(pydantic.BaseModel, extra="forbid"):
    entities: list[Entity]


def rows(name: str, schema: dict, call: dict, model: type[pydantic.BaseModel]) -> dict:
    """The timed operations for one call, each checked to do what it claims."""
    # The validators read `reason` as a declared key, as the auditor tolerates it.
    schema = {**schema, "properties": {**schema["properties"], "reason": {"type": "string"}}}
    auditor = Auditor(on_warn=lambda warning: None)
    auditor.replace_catalog([{"name": name, "inputSchema": schema}])
    text = json.dumps(call, separators=(",", ":"))
    validator = jsonschema.Draft202012Validator(schema)
    assert auditor.audit(name, call) is None and auditor.audit(name, text) is None
    assert auditor.coverage.audited == 2
    assert validator.is_valid(call) and not validator.is_valid({**call, "ffset": 1})
    model.model_validate(call)
    return {
        "bytes": len(text),
        "audit(dict)": lambda: auditor.audit(name, call),
        "audit(str)": lambda: auditor.audit(name, text),
        "json.loads": lambda: json.loads(text),
        "jsonschema": lambda: validator.is_valid(call),
        "pydantic": lambda: model.model_validate(call),
    }


def measure(operations: dict, number: int, rounds: int) -> dict[str, float]:
    """Nanoseconds per call of each operation: the best of `rounds` interleaved rounds."""
    best = {label: float("inf") for label in operations}
    for _ in range(rounds):
        for label, operation in operations.items():
            seconds = timeit.Timer(operation).timeit(number)
            best[label] = min(best[label], seconds / number * 1e9)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions: a check, not a measurement")
    options = parser.parse_args()
    number, rounds = (2_000, 3) if options.quick else (20_000, 15)

    print(f"mcp_unknown_keys {mcp_unknown_keys.__version__}, Python {platform.python_version()}, "
          f"jsonschema {importlib.metadata.version('jsonschema')}, pydantic {pydantic.VERSION}, {platform.machine()}")
    print(f"{number} calls per round, best of {rounds} interleaved rounds\n")
    for title, (name, schema, call, model) in {
        "flat": ("fs_read", FLAT_SCHEMA, FLAT_CALL, FlatModel),
        "nested": ("create_entities", NESTED_SCHEMA, NESTED_CALL, NestedModel),
    }.items():
        operations = rows(name, schema, call, model)
        size = operations.pop("bytes")
        ns = measure(operations, number, rounds)
        print(f"{title} call, {size} bytes of JSON:")
        for label, cost in ns.items():
            print(f"  {label:<12} {cost:>9.0f} ns   {cost / ns['audit(dict)']:>6.2f}x audit(dict)")
        print(f"  json.loads / audit(dict) = {ns['json.loads'] / ns['audit(dict)']:.2f}; "
              f"jsonschema / audit(dict) = {ns['jsonschema'] / ns['audit(dict)']:.1f}; "
              f"pydantic / audit(dict) = {ns['pydantic'] / ns['audit(dict)']:.2f}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
