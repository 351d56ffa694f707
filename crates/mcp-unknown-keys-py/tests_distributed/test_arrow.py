"""`audit_arrow` reads every Arrow form of a column of records as `audit_records` reads the records."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from corpus import corpus, declarations, transcript

from mcp_unknown_keys import audit_arrow, audit_records

import random


def rows() -> list[str]:
    return corpus("transcript", 200, 3) + corpus("exchanges", 100, 4)


@pytest.mark.parametrize("kind", [pa.string(), pa.large_string(), pa.binary(), pa.large_binary(), pa.string_view()])
def test_each_text_type_gives_the_records_report(kind) -> None:
    text = rows()
    expected = audit_records(text, declarations(), by=["model"])
    column = pa.array(text, pa.string()).cast(kind)
    batch = pa.record_batch({"record": column, "n": pa.array(range(len(text)))})
    assert audit_arrow(batch, column="record", tools=declarations(), by=["model"]) == expected


def test_chunks_slices_and_nulls() -> None:
    text = rows()
    expected = audit_records(text, declarations())
    with_nulls = [None, *text[:150], None, *text[150:], None]
    table = pa.Table.from_batches(
        [pa.record_batch({"record": pa.array(part, pa.large_string())}) for part in (with_nulls[:77], with_nulls[77:])]
    )
    assert table.column("record").num_chunks == 2
    report = audit_arrow(table, tools=declarations())
    assert report == expected and report.lines["read"] == len(text)
    # A slice has an offset into its buffers: only its own rows are read.
    array = pa.array(with_nulls, pa.string())
    part = audit_arrow(array.slice(1, 150), tools=declarations())
    assert part == audit_records(text[:150], declarations())


def test_a_struct_column_reads_as_its_json() -> None:
    records = transcript(random.Random(5), 100)
    expected = audit_records(records, declarations())
    column = pa.array(records)
    assert pa.types.is_struct(column.type)
    # The schema gives every row every key any row's arguments carried: null ones are read as absent.
    assert audit_arrow(pa.table({"record": column}), tools=declarations()) == expected


def test_whole_rows_are_records_when_no_column_is_named() -> None:
    records = [json.loads(line) for line in corpus("exchanges", 50, 9) if line.startswith("{")]
    table = pa.table({"id": [r["id"] for r in records], "request": [json.dumps(r["request"]) for r in records]})
    # The request as text in a column is no body: only a record of the row's own shape is read.
    assert audit_arrow(table).coverage.calls == 0
    table = pa.Table.from_pylist(records)
    assert audit_arrow(table).coverage.to_dict() == audit_records(records).coverage.to_dict()


def test_a_name_column_names_each_row_s_file() -> None:
    first, then = corpus("spans", 80, 1), corpus("spans", 60, 2)
    table = pa.Table.from_batches(
        [
            pa.record_batch({"record": first, "path": ["a.jsonl"] * len(first)}),
            pa.record_batch({"record": then, "path": ["b.jsonl"] * len(then)}),
        ]
    )
    report = audit_arrow(table, tools=declarations(), name_column="path")
    expected = audit_records(first, declarations(), name="a.jsonl").merge(audit_records(then, declarations(), name="b.jsonl"))
    assert report == expected
    # A dictionary-encoded path column, as Parquet readers give one, names the same.
    encoded = table.set_column(1, "path", table.column("path").dictionary_encode())
    assert audit_arrow(encoded, tools=declarations(), name_column="path") == expected
    assert sorted(group["group"]["file"] for group in report.by("file")) == ["a.jsonl", "b.jsonl"]
    with pytest.raises(KeyError, match="no column 'file'"):
        audit_arrow(table, name_column="file")


def test_dictionary_and_null_columns() -> None:
    text = rows()
    encoded = pa.array(text, pa.string()).dictionary_encode()
    assert audit_arrow(encoded, tools=declarations()) == audit_records(text, declarations())
    assert audit_arrow(pa.nulls(3)) == audit_records([])


def test_other_columns_are_a_clear_error() -> None:
    with pytest.raises(TypeError, match="JSON text"):
        audit_arrow(pa.array([1, 2, 3]))
    with pytest.raises(KeyError, match="no column 'nope'"):
        audit_arrow(pa.table({"a": ["{}"]}), column="nope")
    with pytest.raises(TypeError, match="RecordBatch"):
        audit_arrow(["{}"])


def test_bytes_that_are_no_utf8_are_counted() -> None:
    report = audit_arrow(pa.array([b"\xff\xfe", b'{"a":1}'], pa.binary()))
    assert report.lines["not_utf8"] == 1 and report.lines["read"] == 2
