"""What the equality contract compares: coverage, the (tool, key) pairs found, and the groups.

A report of any door comes down to one summary; the command line's JSON
lines come down to the same. Equal summaries are equal results.
"""

from __future__ import annotations

import json
import subprocess

DIMENSIONS = ["model", "tool", "key", "cause", "file"]


def _group_key(group: dict) -> str:
    # per_1000_audited is derived from the counts: compared all the same.
    return json.dumps(group, sort_keys=True)


def summary(report) -> dict:
    """Coverage, pairs said, findings per pair, and the groups by each dimension (as sets)."""
    pairs = sorted({(w.tool, key) for w in report.warnings for key in w.unknown_keys + w.unknown_paths})
    return {
        "coverage": report.coverage.to_dict(),
        "pairs": pairs,
        "findings": sorted((f["tool"], f["key"], f["calls"]) for f in report.findings),
        "groups": {d: sorted(_group_key(g) for g in report.by(d)) for d in DIMENSIONS},
    }


def cli_summary(cli: str, path: str | list[str], tools: str | None) -> dict:
    """The same summary from `mcp-unknown-keys audit --format jsonl --by D` of the file(s), once per dimension."""
    paths = [path] if isinstance(path, str) else path
    groups = {}
    result = {}
    for dimension in DIMENSIONS:
        args = [cli, "audit", "--format", "jsonl", "--by", dimension]
        if tools:
            args += ["--tools", tools]
        run = subprocess.run([*args, *paths], capture_output=True, text=True, check=False)
        assert run.returncode == 0, run.stderr
        lines = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
        groups[dimension] = sorted(_group_key(line) for line in lines if "group" in line)
        warnings = [line for line in lines if "unknown_keys" in line and "group" not in line and "verdict" not in line]
        result["coverage"] = lines[-1]["coverage"]
        result["pairs"] = sorted({(w["tool"], key) for w in warnings for key in w["unknown_keys"] + w.get("unknown_paths", [])})
    result["groups"] = groups
    return result


def without_findings(summary: dict) -> dict:
    """A summary less the per-pair call counts, which the command line's JSON lines do not print."""
    return {key: value for key, value in summary.items() if key != "findings"}
