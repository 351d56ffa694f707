"""Ray Data: a dataset of records audited batch by batch on the workers, the reports added up.

>>> import ray
>>> from mcp_unknown_keys.ray import audit_dataset
>>> ds = ray.data.read_text("s3://bucket/transcripts/")          # JSON Lines: a line a row, in column "text"
>>> report = audit_dataset(ds, tools=tools, by=["model", "tool"])
>>> report.by("model")

Each worker audits its Arrow batches in place (``mcp_unknown_keys.arrow.audit_arrow``,
in ``map_batches``) and hands back its report as JSON text; the driver merges
them (``Report.merge``). Every record is an input of its own, so the result is
the report of one ``audit_records`` run over all the records, whatever the
blocks and batches.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from ._native import Report, audit_records
from .arrow import audit_arrow

__all__ = ["audit_dataset"]


def audit_dataset(
    ds: Any,
    column: str | None = None,
    tools: Any = None,
    *,
    allow: Iterable[str] | None = None,
    top_level_only: bool = False,
    by: list[str] | None = None,
    name: str | None = None,
    name_column: str | None = None,
    batch_size: int | None = None,
) -> Report:
    """Audits a ``ray.data.Dataset`` whose rows are records and returns one ``Report``.

    ``column``: the column of records (JSON text or structs); left out, the
    dataset's one column (``read_text``'s ``text``), or each whole row when
    it has several. ``tools``: the catalogue, as ``audit_file`` takes it; on
    a cluster, the declarations themselves (a path must be readable on
    every worker). ``by``, ``allow``, ``top_level_only``, ``name`` and
    ``name_column`` are ``audit_arrow``'s (``read_text(paths,
    include_paths=True)`` and ``name_column="path"`` group the calls by the
    file they came from); ``batch_size`` is ``map_batches``' (Ray's default when
    left out). Each batch is one small report: the batch size changes
    nothing in the result.
    """
    try:
        import pyarrow as pa
    except ImportError as error:  # pragma: no cover - Ray Data brings pyarrow
        raise ImportError("mcp_unknown_keys.ray needs pyarrow: pip install 'ray[data]'") from error
    options = {"allow": list(allow) if allow is not None else None, "top_level_only": top_level_only, "by": by}

    def audit_batch(batch: Any) -> Any:
        report = audit_arrow(batch, column=column, tools=tools, name=name, name_column=name_column, **options)
        return pa.table({"report": pa.array([report.to_json()], pa.large_string())})

    sized = {} if batch_size is None else {"batch_size": batch_size}
    partial = ds.map_batches(audit_batch, batch_format="pyarrow", zero_copy_batch=True, **sized)
    nothing = audit_records([], tools, **options)
    reports = (Report.from_json(row["report"]) for row in partial.iter_rows())
    return functools.reduce(Report.merge, reports, nothing)
