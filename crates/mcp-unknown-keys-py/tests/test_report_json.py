"""`Report.from_json` and `Report.merge` trust no report: bounds, counts that agree, options that match, no overflow.

A report read back is text a worker (or anyone) wrote: it is read within a report's bounds and without building a JSON
tree, its counts must agree, and reports merge only when their audits were given the same options.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from mcp_unknown_keys import Report, audit_records

FS_TOOLS = [{"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {}, "offset": {}}}}]
OTHER_TOOLS = [{"name": "read_file", "inputSchema": {"type": "object", "properties": {"path": {}}}}]
MAX = 2**64 - 1


def call(n: int, arguments: dict, tool: str = "mcp__fs__read_file") -> dict:
    use = {"type": "tool_use", "id": f"toolu_{n}", "name": tool, "input": arguments}
    return {"type": "assistant", "message": {"model": "claude-sonnet-4-5", "content": [use]}}


RECORDS = [call(1, {"path": "a", "ffset": 1}), call(2, {"path": "b"}), call(3, {"x": 1}, tool="unlisted"), "not JSON"]


def written(report: Report) -> dict:
    return json.loads(report.to_json())


def read(form: dict) -> Report:
    return Report.from_json(json.dumps(form))


def grouping(form: dict, *by: str) -> list:
    return next(g["groups"] for g in form["groups"] if g["by"] == list(by))


def test_a_report_reads_back_as_it_was_written():
    report = audit_records(RECORDS, FS_TOOLS, by=["model", "tool"])
    back = Report.from_json(report.to_json())
    assert back == report and back.to_json() == report.to_json()
    assert written(report)["report"] == 2 and set(written(report)["options"]) == {"tools", "allow", "top_level_only"}


@pytest.mark.parametrize(
    "forge, why",
    [
        (lambda f: f["coverage"].update(audited=f["coverage"]["calls"] + 1), "coverage: 4 audited calls of 3 calls"),
        (lambda f: f["coverage"].update(calls=MAX, audited=MAX), "the unaudited calls by reason do not add up"),
        (lambda f: f["coverage"]["unaudited"].update(no_catalogue=5), "do not add up to the 1 calls not audited"),
        (lambda f: f["lines"].update(not_json=f["lines"]["read"] + 1), "lines: 5 lines unreadable or idle of 4 lines read"),
        (lambda f: grouping(f, "tool")[0].update(audited=10**6), "audited calls of"),
        (lambda f: grouping(f, "model")[0].update(calls_with_unknown_keys=3), "3 calls with undeclared keys of 2 audited"),
        (lambda f: grouping(f, "model")[0]["unknown_keys"].update(ffset=9), 'the key "ffset" carried by 9 calls'),
        (lambda f: grouping(f, "model")[0]["causes"].update(made_up=1), 'no cause is named "made_up"'),
        (lambda f: grouping(f, "tool").append(dict(grouping(f, "tool")[0])), "said twice"),
        (lambda f: grouping(f, "tool")[0].update(calls=grouping(f, "tool")[0]["calls"] + 1), "count 4 calls, 2 audited"),
        (lambda f: f["findings"].append(dict(f["findings"][0])), "is found twice"),
        (lambda f: f.update(options={**f["options"], "allow": "nope"}), "32 hexadecimal digits"),
        (lambda f: f.pop("options"), "has `options`"),
        (lambda f: f.update(report=3), "not a report's JSON form"),
    ],
)
def test_counts_that_disagree_are_refused(forge, why):
    form = written(audit_records(RECORDS, FS_TOOLS, by=["model", "tool"]))
    forge(form)
    with pytest.raises(ValueError, match="Report.from_json") as raised:
        read(form)
    assert why in str(raised.value)


def test_a_report_s_bounds_hold_when_it_is_read_back():
    form = written(audit_records(RECORDS, FS_TOOLS))
    tool = grouping(form, "tool")
    # 5,000 groups of one grouping: a report keeps 1,000 and (other).
    template = tool[0]
    tool[:] = [{**template, "group": {"tool": f"t{n}"}, "calls": 0, "audited": 0} for n in range(5000)]
    with pytest.raises(ValueError, match=r"more than 1001 groups in a grouping \(1000 and one \(other\)\)"):
        read(form)
    form = written(audit_records(RECORDS, FS_TOOLS))
    grouping(form, "model")[0]["unknown_keys"] = {f"k{n}": 0 for n in range(500)}
    with pytest.raises(ValueError, match=r"more than 201 keys in a group"):
        read(form)
    form = written(audit_records(RECORDS, FS_TOOLS))
    form["coverage"]["unlisted_tools"] = {f"t{n}": 0 for n in range(2000)}
    with pytest.raises(ValueError, match=r"more than 1001 unlisted tools"):
        read(form)
    form = written(audit_records(RECORDS, FS_TOOLS))
    grouping(form, "tool")[0]["group"]["tool"] = "t" * 300
    with pytest.raises(ValueError, match=r"a value of 300 bytes"):
        read(form)
    # Notices past the first 100 are skipped, as a merge drops them.
    form = written(audit_records(RECORDS, FS_TOOLS))
    form["notices"] = [f"n{n}" for n in range(10_000)]
    assert read(form).notices == [f"n{n}" for n in range(100)]


def test_reports_of_audits_given_different_options_do_not_merge():
    base = audit_records(RECORDS, FS_TOOLS)
    assert base.merge(audit_records(RECORDS, [dict(tool) for tool in FS_TOOLS])) == audit_records(RECORDS * 2, FS_TOOLS)
    for other, option in [
        (audit_records(RECORDS, OTHER_TOOLS), r"the catalogue \(tools=\) differs"),
        (audit_records(RECORDS), r"the catalogue \(tools=\) differs"),
        (audit_records(RECORDS, FS_TOOLS, allow=["x"]), r"the keys allowed \(allow=\) differs"),
        (audit_records(RECORDS, FS_TOOLS, top_level_only=True), "top_level_only differs"),
        (audit_records(RECORDS, FS_TOOLS, no_missing=True), "no_missing differs"),
    ]:
        for a, b in [(base, other), (other, base)]:
            with pytest.raises(ValueError, match=f"Report.merge: .*{option}"):
                a.merge(b)
        assert base != other
    # Read back, a report keeps what its audit was given.
    with pytest.raises(ValueError, match="top_level_only differs"):
        Report.from_json(base.to_json()).merge(Report.from_json(audit_records([], FS_TOOLS, top_level_only=True).to_json()))
    with pytest.raises(ValueError, match="no_missing differs"):
        Report.from_json(base.to_json()).merge(Report.from_json(audit_records([], FS_TOOLS, no_missing=True).to_json()))
    # Written only when on: a report of the default reads as it always did.
    assert "no_missing" not in json.loads(base.to_json())["options"]


def test_a_report_written_before_options_were_recorded_reads_and_merges_with_its_kind():
    old = written(audit_records(RECORDS, FS_TOOLS))
    old["report"] = 1
    del old["options"]
    first, then = read(old), read(old)
    merged = first.merge(then)
    assert merged.coverage.calls == 2 * first.coverage.calls
    assert json.loads(merged.to_json())["report"] == 1
    with pytest.raises(ValueError, match=r'written before reports recorded the options of their audit \("report": 1\)'):
        first.merge(audit_records(RECORDS, FS_TOOLS))
    with pytest.raises(ValueError, match="not a report's JSON form"):
        read({**old, "options": written(audit_records([], FS_TOOLS))["options"]})


def test_a_merge_whose_counts_would_overflow_is_refused():
    for member, value, what in [
        ("lines", {"read": MAX}, "lines read"),
        ("incomplete_inputs", MAX, "incomplete inputs"),
    ]:
        form = written(audit_records([], FS_TOOLS))
        form[member] = value
        huge = read(form)
        with pytest.raises(ValueError, match=f"the merged {what} would pass 18446744073709551615"):
            huge.merge(huge)
    # Counts that agree at 2**64 - 1, in a report of no grouping.
    form = written(audit_records([], FS_TOOLS))
    form["groups"] = []
    form["coverage"] = {"calls": MAX, "audited": MAX}
    huge = read(form)
    with pytest.raises(ValueError, match="the merged calls would pass"):
        huge.merge(huge)
    form["findings"] = [{"tool": "t", "key": "k", "calls": MAX}]
    form["coverage"] = {"calls": 0, "audited": 0}
    huge = read(form)
    with pytest.raises(ValueError, match="the merged calls of a finding would pass"):
        huge.merge(huge)


def test_a_large_report_costs_a_small_multiple_of_its_text(tmp_path):
    tools = [{"name": "f", "inputSchema": {"properties": {"q": {}}}}]
    form = written(audit_records([], tools, by=["model"]))
    # Many warnings of many short keys, as a corpus of invented keys makes them; and a member no report has, of
    # small numbers, which a JSON tree would build and which is skipped unread.
    keys = [f"k{n:05}" for n in range(20_000)]
    warning = {"tool": "f", "unknown_keys": keys, "declared_keys": ["q"], "id": "1", "hints": [], "missing_keys": []}
    form["warnings"] = [dict(warning, tool=f"t{n}") for n in range(30)]
    form["padding"] = [0] * 2_000_000
    path = tmp_path / "report.json"
    path.write_text(json.dumps(form))
    # Read in a process of its own, the text already in memory, so that the growth measured is the reading's.
    script = textwrap.dedent(
        """
        import resource, sys
        from mcp_unknown_keys import Report
        text = open(sys.argv[1]).read()
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        report = Report.from_json(text)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(len(text), (after - before) * 1024, len(report.warnings))
        """
    )
    output = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True).stdout
    size, grown, warnings = map(int, output.split())
    assert warnings == 30 and size > 10_000_000
    assert grown < 4 * size, f"{size} bytes of JSON grew the process by {grown} bytes"
