"""The recorded sessions every door is held to (the CLI's
tests/fixtures/sessions/, format in its README), fed to the Python
`Session`: it says what `audit_file` of the same recording says, and what
every other door says (the corpus's expected.json, which the Rust
differential test holds equal to the library's `Session` and every door)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Recorded

from mcp_unknown_keys import Session, audit_file

CORPUS = Path(__file__).resolve().parents[2] / "mcp-unknown-keys-cli" / "tests" / "fixtures" / "sessions"
PREFIXES = {'{"from":"host","message":': "host", '{"from":"server","message":': "server"}


def read(path: Path) -> tuple[dict, list[tuple[str, str]]]:
    """A session's options, and its messages with their side, each as the
    bytes that travelled (cut out of the line, as its one form allows)."""
    options: dict = {}
    messages = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if n == 0 and line.startswith('{"options":'):
            options = json.loads(line)["options"]
            continue
        prefix = next((prefix for prefix in PREFIXES if line.startswith(prefix)), None)
        assert prefix and line.endswith("}"), f"{path.name}:{n + 1} is not in the corpus's one form"
        side, text = PREFIXES[prefix], line[len(prefix) : -1]
        assert json.loads(line)["message"] == json.loads(text)
        messages.append((side, text))
    return options, messages


SESSIONS = sorted(CORPUS.glob("*.jsonl"))


def test_the_corpus_is_there():
    assert len(SESSIONS) >= 30, f"{CORPUS} holds {len(SESSIONS)} sessions"


@pytest.fixture(scope="module")
def expected() -> dict:
    return json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", SESSIONS, ids=[p.stem for p in SESSIONS])
def test_the_session_says_what_every_door_says(path: Path, expected: dict, tmp_path: Path):
    options, messages = read(path)
    recorded, handed = Recorded(), []
    session = Session(
        on_warn=recorded,
        on_verdict=handed.append,
        allow=options.get("allow"),
        top_level_only=options.get("top_level_only", False),
    )
    returned = []
    for side, text in messages:
        returned += session.from_host(text) if side == "host" else session.from_server(text)
    session.finish()
    warnings = [w.to_dict() for w in returned]
    assert returned == recorded.warnings
    assert handed == session.verdicts

    recording = tmp_path / "recording.jsonl"
    recording.write_text("".join(text + "\n" for _, text in messages), encoding="utf-8")
    report = audit_file(recording, allow=options.get("allow"), top_level_only=options.get("top_level_only", False))
    assert warnings == [w.to_dict() for w in report.warnings]
    assert session.coverage == report.coverage

    doors = expected[path.stem]
    assert warnings == doors["warnings"]
    assert session.verdicts == doors["verdicts"]
    assert session.coverage.to_dict() == doors["coverage"]
