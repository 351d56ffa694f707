"""Spark: a DataFrame of records audited partition by partition in Arrow, the reports added up.

>>> from mcp_unknown_keys.spark import audit_dataframe
>>> df = spark.read.parquet("s3a://bucket/tool-calls/")
>>> report = audit_dataframe(df, column="record", tools=tools, by=["model"])
>>> report.by("model")

Each executor audits its partitions' Arrow batches in place
(``mcp_unknown_keys.arrow.audit_arrow``, in ``mapInArrow``), and hands back one
report per partition as JSON text; the driver merges them (``Report.merge``).
Every record is an input of its own, so the result is the report of one
``audit_records`` run over all the records, however Spark partitions them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import Any

from ._native import Report, audit_records
from .arrow import audit_arrow

__all__ = ["audit_dataframe"]


def audit_dataframe(
    df: Any,
    column: str | None = None,
    tools: Any = None,
    *,
    allow: Iterable[str] | None = None,
    top_level_only: bool = False,
    by: list[str] | None = None,
    name: str | None = None,
    name_column: str | None = None,
) -> Report:
    """Audits a ``pyspark.sql.DataFrame`` whose rows are records and returns one ``Report``.

    ``column``: the column of records (JSON text, binary or a struct); left
    out, the DataFrame's one column (``spark.read.text``'s ``value``), or
    each whole row when it has several. ``tools``: the catalogue, as
    ``audit_file`` takes it; on a cluster, the declarations themselves (a
    path must be readable on every executor). ``by``, ``allow``,
    ``top_level_only``, ``name`` and ``name_column`` are ``audit_arrow``'s
    (``df.withColumn("path", input_file_name())`` and
    ``name_column="path"`` group the calls by the file they came from).
    """
    options = {"allow": list(allow) if allow is not None else None, "top_level_only": top_level_only, "by": by}
    for wanted in (column, name_column):
        if wanted is not None and wanted not in df.columns:
            raise KeyError(f"no column {wanted!r}: the columns are {df.columns}")
    if column is not None:
        df = df.select(column, *([name_column] if name_column else []))

    def audit_partition(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        report = audit_records([], tools, **options)
        for batch in batches:
            report = report.merge(audit_arrow(batch, tools=tools, name=name, name_column=name_column, **options))
        yield pa.record_batch({"report": pa.array([report.to_json()], pa.large_string())})

    partial = df.mapInArrow(audit_partition, "report string")
    nothing = audit_records([], tools, **options)
    reports = (Report.from_json(row["report"]) for row in partial.toLocalIterator())
    return functools.reduce(Report.merge, reports, nothing)
