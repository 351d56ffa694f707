"""Equality as the contract: Ray Data, Spark, `audit_records` and the command line agree.

For each shape, the test writes the records as JSON Lines and as Parquet,
and audits them four ways: the command line's `audit` of the JSON Lines
file, `audit_records` of its lines, Ray Data (`read_text` and
`read_parquet`, several blocks, `map_batches`; `read_json` too) and Spark in local mode
(`spark.read.parquet` and `spark.read.text`, two partitions, `mapInArrow`).
Each gives the same coverage, the same (tool, key) pairs and the same
groups by every dimension.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from compare import cli_summary, summary, without_findings
from corpus import corpus, declarations

from mcp_unknown_keys import audit_records

# shape -> whether its records need the catalogue given apart (request bodies carry their own).
SHAPES = {"transcript": True, "exchanges": False, "spans": True}
BY = ["model", "tool"]


@pytest.fixture(scope="module")
def corpora(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("corpora")
    tools = root / "tools.json"
    tools.write_text(json.dumps(declarations()), encoding="utf-8")
    made = {}
    for seed, (shape, needs_tools) in enumerate(SHAPES.items()):
        lines = corpus(shape, 300, 100 + seed)
        jsonl = root / f"{shape}.jsonl"
        jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
        parquet = root / f"{shape}.parquet"
        # Small row groups: several blocks and batches per file.
        table = pa.table({"n": pa.array(range(len(lines))), "record": pa.array(lines, pa.string())})
        pq.write_table(table, parquet, row_group_size=64)
        made[shape] = {
            "lines": lines,
            "jsonl": str(jsonl),
            "parquet": str(parquet),
            "tools": str(tools) if needs_tools else None,
        }
    return made


def one_machine(case: dict):
    return audit_records(case["lines"], case["tools"], by=BY, name=case["jsonl"])


@pytest.mark.parametrize("shape", SHAPES)
def test_records_equal_the_command_line(shape: str, corpora: dict, cli: str) -> None:
    case = corpora[shape]
    mine = summary(one_machine(case))
    assert mine["coverage"]["calls"] > 250 and mine["pairs"], "the corpus holds calls and findings"
    assert mine["coverage"]["audited"] < mine["coverage"]["calls"], "and calls no catalogue lists"
    assert without_findings(mine) == cli_summary(cli, case["jsonl"], case["tools"])


@pytest.mark.parametrize("shape", SHAPES)
def test_ray_equals_one_machine(shape: str, corpora: dict, ray_local) -> None:
    from mcp_unknown_keys.ray import audit_dataset

    ray = ray_local
    case = corpora[shape]
    expected = summary(one_machine(case))
    tools = declarations() if case["tools"] else None
    text = ray.data.read_text(case["jsonl"], override_num_blocks=4).materialize()
    assert text.num_blocks() > 1
    from_text = audit_dataset(text, tools=tools, by=BY, name=case["jsonl"], batch_size=50)
    assert summary(from_text) == expected
    parquet = ray.data.read_parquet(case["parquet"], override_num_blocks=4)
    from_parquet = audit_dataset(parquet, column="record", tools=case["tools"], by=BY, name=case["jsonl"])
    assert summary(from_parquet) == expected
    assert from_parquet == one_machine(case)


@pytest.mark.parametrize("shape", SHAPES)
def test_ray_reads_json_lines_parsed_into_structs_the_same(shape: str, corpora: dict, ray_local, tmp_path: Path) -> None:
    from mcp_unknown_keys.ray import audit_dataset

    case = corpora[shape]
    # read_json parses every line, so this file holds only lines that are JSON.
    lines = [line for line in case["lines"] if line.startswith("{")]
    jsonl = tmp_path / f"{shape}.jsonl"
    jsonl.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tools = declarations() if case["tools"] else None
    expected = audit_records(lines, tools, by=BY)
    ds = ray_local.data.read_json(str(jsonl), override_num_blocks=3)
    assert len(ds.columns()) > 1, "each row a record of struct columns"
    assert audit_dataset(ds, tools=tools, by=BY, batch_size=64) == expected


@pytest.mark.parametrize("shape", SHAPES)
def test_spark_equals_one_machine(shape: str, corpora: dict, spark) -> None:
    from mcp_unknown_keys.spark import audit_dataframe

    case = corpora[shape]
    expected = summary(one_machine(case))
    df = spark.read.parquet(case["parquet"]).repartition(2)
    assert df.rdd.getNumPartitions() == 2
    from_parquet = audit_dataframe(df, column="record", tools=case["tools"], by=BY, name=case["jsonl"])
    assert summary(from_parquet) == expected
    assert from_parquet == one_machine(case)
    text = spark.read.text(case["jsonl"])
    tools = declarations() if case["tools"] else None
    assert summary(audit_dataframe(text, tools=tools, by=BY, name=case["jsonl"])) == expected


def test_a_path_column_groups_the_calls_by_file_as_the_command_line_does(corpora: dict, cli: str, ray_local, spark) -> None:
    from mcp_unknown_keys.ray import audit_dataset
    from mcp_unknown_keys.spark import audit_dataframe

    # Two shapes whose tools keep one name (a transcript's `mcp__fs__read_file` is
    # `read_file` in the others: said once, under the name met first).
    files = [corpora[shape]["jsonl"] for shape in ("exchanges", "spans")]
    tools = corpora["spans"]["tools"]
    expected = cli_summary(cli, files, tools)
    assert len(expected["groups"]["file"]) == 2
    ds = ray_local.data.read_text(files, include_paths=True)
    from_ray = summary(audit_dataset(ds, tools=tools, by=BY, name_column="path", batch_size=100))
    assert without_findings(from_ray) == expected
    from pyspark.sql.functions import input_file_name

    df = spark.read.text(files).withColumn("path", input_file_name())
    from_spark = summary(audit_dataframe(df, column="value", tools=tools, by=BY, name_column="path"))
    # Spark names a file by its URI (file:///…): the same groups under those names.
    uris = {json.loads(group)["group"]["file"] for group in from_spark["groups"]["file"]}
    assert sorted(uri.rpartition("/")[2] for uri in uris) == sorted(Path(file).name for file in files)
    assert {k: v for k, v in from_spark.items() if k != "groups"} == {k: v for k, v in from_ray.items() if k != "groups"}
    assert {d: g for d, g in from_spark["groups"].items() if d != "file"} == {
        d: g for d, g in from_ray["groups"].items() if d != "file"
    }


def test_an_empty_dataset_gives_an_empty_report(ray_local, spark, tmp_path: Path) -> None:
    from mcp_unknown_keys.ray import audit_dataset
    from mcp_unknown_keys.spark import audit_dataframe

    empty = audit_records([], by=BY)
    ds = ray_local.data.from_arrow(pa.table({"record": pa.array([], pa.string())}))
    assert audit_dataset(ds, column="record", by=BY) == empty
    df = spark.createDataFrame([], "record string")
    assert audit_dataframe(df, column="record", by=BY) == empty


@pytest.mark.parametrize("name", ["hooks.jsonl", "openai-chat-requests.jsonl", "openai-responses.jsonl"])
def test_a_conversation_spread_over_lines_is_one_row(name: str, cli: str) -> None:
    """A file whose lines repeat a call (a request log's history, a hook before and after the call)
    counts each call once as the command line reads it only when one row holds the whole conversation."""
    from corpus import FIXTURES

    path = FIXTURES / name
    tools = str(FIXTURES / "tools.json")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    expected = cli_summary(cli, str(path), tools)
    one_row = audit_records(["[" + ",".join(lines) + "]"], tools, name=str(path))
    assert without_findings(summary(one_row))["coverage"] == expected["coverage"]
    assert summary(one_row)["pairs"] == expected["pairs"]
    # A row a line: each row is read alone, so a call two rows hold counts twice.
    assert audit_records(lines, tools).coverage.calls > expected["coverage"]["calls"]
