"""Corpora for the distributed tests: records in several shapes `audit` reads, made from a seed.

Each shape is a list of records (dicts), one a row, that hold what they need:
the same records audited one by one, partitioned, on Ray or Spark, or as the
lines of a file by the command line, give the same report. The fixture lines
of the command line's tests are the real samples.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "mcp-unknown-keys-cli" / "tests" / "fixtures" / "audit"

# Fixture files whose lines each hold a whole record: no line's calls repeat
# another's or need another line's catalogue (the others record a request
# log's repeated history or a call's hooks before and after it).
SELF_CONTAINED = [
    "agent-steps.jsonl",
    "anthropic-batch-results.jsonl",
    "anthropic-messages.jsonl",
    "bedrock-converse.jsonl",
    "codex-exec.jsonl",
    "exchanges.jsonl",
    "gemini.jsonl",
    "langchain.jsonl",
    "ollama-chat.jsonl",
    "openai-batch-input.jsonl",
    "openai-batch-output.jsonl",
    "otel-flat.jsonl",
    "vercel-ai-sdk.jsonl",
]

MODELS = ["gpt-4o", "claude-sonnet-4-5", "gemini-2.5-pro", "o3"]

# name -> declared keys, and the undeclared keys models send to it.
TOOLS = {
    "read_file": (["path", "head", "tail"], ["ffset", "Path", "heads", "encoding"]),
    "search_files": (["path", "pattern"], ["limit", "patern", "excludePatterns"]),
    "list_directory": (["path"], ["recursive", "depth"]),
}


def declarations() -> list[dict]:
    """The tools, as an MCP listing declares them."""
    return [
        {"name": name, "inputSchema": {"type": "object", "properties": {key: {"type": "string"} for key in keys}}}
        for name, (keys, _) in TOOLS.items()
    ]


def fixture_records() -> list[str]:
    """Every line of the self-contained fixture files, as JSON text: the real samples."""
    lines = []
    for name in SELF_CONTAINED:
        text = (FIXTURES / name).read_text(encoding="utf-8")
        lines.extend(line for line in text.splitlines() if line.strip())
    return lines


def _arguments(rng: random.Random, tool: str) -> dict:
    declared, undeclared = TOOLS.get(tool, (["url"], ["timeout"]))
    arguments = {key: f"v{rng.randrange(100)}" for key in rng.sample(declared, rng.randint(1, len(declared)))}
    if rng.random() < 0.3:
        for key in rng.sample(undeclared, rng.randint(1, min(2, len(undeclared)))):
            arguments[key] = rng.randrange(1000)
    return arguments


def _tool(rng: random.Random) -> str:
    # Now and then a tool no catalogue lists: counted as unaudited.
    return "fetch_url" if rng.random() < 0.05 else rng.choice(list(TOOLS))


def transcript(rng: random.Random, n: int) -> list[dict]:
    """Claude Code transcript lines: tool_use blocks of `mcp__fs__*` tools, the catalogue given apart."""
    rows = []
    for i in range(n):
        tool = _tool(rng)
        rows.append(
            {
                "type": "assistant",
                "uuid": f"u{i}",
                "message": {
                    "model": rng.choice(MODELS),
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Working on it."},
                        {"type": "tool_use", "id": f"toolu_{i:06d}", "name": f"mcp__fs__{tool}", "input": _arguments(rng, tool)},
                    ],
                },
            }
        )
    return rows


def exchanges(rng: random.Random, n: int) -> list[dict]:
    """OpenAI chat request/response pairs: the request's tools are the catalogue of its response's calls."""
    rows = []
    for i in range(n):
        model = rng.choice(MODELS)
        listed = rng.sample(list(TOOLS), 2)
        tools = [
            {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {k: {} for k in TOOLS[name][0]}}}}
            for name in listed
        ]
        calls = []
        for j in range(rng.randint(1, 3)):
            tool = rng.choice(listed) if rng.random() < 0.9 else _tool(rng)
            calls.append({"id": f"call_{i}_{j}", "type": "function", "function": {"name": tool, "arguments": json.dumps(_arguments(rng, tool))}})
        rows.append(
            {
                "id": f"ex_{i}",
                "request": {"model": model, "messages": [{"role": "user", "content": "Go."}], "tools": tools},
                "response": {"model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": None, "tool_calls": calls}}]},
            }
        )
    return rows


def spans(rng: random.Random, n: int) -> list[dict]:
    """OpenTelemetry GenAI `execute_tool` spans, flattened, the catalogue given apart."""
    rows = []
    for i in range(n):
        tool = _tool(rng)
        rows.append(
            {
                "name": f"execute_tool {tool}",
                "trace_id": f"{i:032x}",
                "span_id": f"{i:016x}",
                "attributes": {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.request.model": rng.choice(MODELS),
                    "gen_ai.tool.name": tool,
                    "gen_ai.tool.call.id": f"call_{i}",
                    "gen_ai.tool.call.arguments": json.dumps(_arguments(rng, tool)),
                },
            }
        )
    return rows


SHAPES = {"transcript": transcript, "exchanges": exchanges, "spans": spans}


def corpus(shape: str, n: int, seed: int) -> list[str]:
    """`n` records of `shape` as JSON text, with a few lines no audit can read among them."""
    rng = random.Random(seed)
    records = [json.dumps(record) for record in SHAPES[shape](rng, n)]
    for at in sorted(rng.sample(range(len(records)), max(1, n // 50)), reverse=True):
        records.insert(at, "not JSON {")
    return records
