"""Arrow columns audited in place: ``audit_arrow`` over a ``pyarrow`` batch.

>>> import pyarrow as pa
>>> from mcp_unknown_keys.arrow import audit_arrow
>>> batch = pa.record_batch({"line": ['{"type":"tool_use","id":"1","name":"f","input":{"q":1,"limt":2}}']})
>>> tools = [{"name": "f", "inputSchema": {"properties": {"q": {}}}}]
>>> audit_arrow(batch, column="line", tools=tools).findings[0]["key"]
'limt'

A column of JSON text (``string``, ``large_string``, ``binary``,
``large_binary``; ``string_view`` is cast to ``large_string``, a dictionary
column decoded) is read where
Arrow keeps it, through the Arrow C Data Interface: no value becomes a
Python object. A ``struct`` column, or a whole row when no column is named
and the batch has several, goes through ``to_pylist`` and ``json.dumps``
(there is no faster way from Python): Arrow gives every row of a struct
every field of the schema, so a field that is null is read as absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ._native import Report, audit_arrow_arrays

__all__ = ["audit_arrow"]


def audit_arrow(
    data: Any,
    column: str | int | None = None,
    tools: Any = None,
    *,
    allow: Iterable[str] | None = None,
    top_level_only: bool = False,
    by: list[str] | None = None,
    name: str | None = None,
    name_column: str | None = None,
) -> Report:
    """Audits the records an Arrow column holds, one record per row, and returns a ``Report``.

    ``data``: a ``pyarrow.RecordBatch`` or ``Table`` (``column`` names the
    column of records; with one column it may be left out, and with
    several and no ``column`` each whole row is a record), or an ``Array``
    or ``ChunkedArray``. Each row is read as ``audit_records`` reads a
    record, as an input of its own; nulls are no records. ``tools``,
    ``allow``, ``top_level_only`` and ``by`` are ``audit_file``'s; ``name``
    is the ``file`` the calls are grouped under (``"records"``, as for
    ``audit_records``, by default), and ``name_column`` a column that names
    each row's (the path ``read_text(..., include_paths=True)`` adds, say),
    ``name`` where it is null.
    """
    import pyarrow as pa

    name = name or "records"
    names = None
    if isinstance(data, (pa.RecordBatch, pa.Table)):
        for wanted in (column, name_column):
            if isinstance(wanted, str) and wanted not in data.schema.names:
                raise KeyError(f"no column {wanted!r}: the columns are {data.schema.names}")
        if name_column is not None:
            names = data.column(name_column)
            data = data.drop_columns([name_column])
        if column is None and data.num_columns == 1:
            column = 0
        if column is None:
            values = pa.array(_rows_as_json(data.to_pylist()), pa.large_string())
        else:
            values = data.column(column)
    elif name_column is not None:
        raise TypeError("name_column names a column of a RecordBatch or Table")
    elif isinstance(data, (pa.Array, pa.ChunkedArray)):
        values = data
    else:
        raise TypeError(
            f"audit_arrow reads a pyarrow RecordBatch, Table, Array or ChunkedArray, not {type(data).__name__}"
        )
    if names is not None:
        # One array each, so that a row's name is at the row's place.
        values, names = (_combined(array) for array in (values, names))
        texts, named = [_as_text(values)], [_as_name(names)]
    else:
        chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
        texts, named = [_as_text(chunk) for chunk in chunks], None
    # Each array's capsules own its buffers: they are held until the audit ends.
    return audit_arrow_arrays(
        [_exported(array) for array in texts],
        tools,
        allow=allow,
        top_level_only=top_level_only,
        by=by,
        name=name,
        names=None if named is None else [_exported(array) for array in named],
    )


def _exported(array: Any) -> tuple[Any, Any, list[int]]:
    """The array's C Data Interface capsules, and its buffers' lengths, which the interface does not carry.

    The native reader checks the array's offsets against these lengths before it reads a value.
    """
    schema, exported = array.__arrow_c_array__()
    return schema, exported, [0 if buffer is None else buffer.size for buffer in array.buffers()]


def _combined(array: Any) -> Any:
    import pyarrow as pa

    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _as_name(array: Any) -> Any:
    """A column of names as text: strings as they are, anything else cast to ``large_string``."""
    import pyarrow as pa
    import pyarrow.types as types

    if types.is_string(array.type) or types.is_large_string(array.type):
        return array
    if types.is_dictionary(array.type):
        array = array.dictionary_decode()
    return array.cast(pa.large_string())


def _as_text(array: Any) -> Any:
    """The array as one the native reader takes: JSON text or bytes, in place when it is already."""
    import pyarrow as pa
    import pyarrow.types as types

    kind = array.type
    if types.is_dictionary(kind):
        return _as_text(array.dictionary_decode())
    if types.is_null(kind):
        # Nothing but nulls: no records.
        return pa.array([], pa.large_string())
    if types.is_string(kind) or types.is_large_string(kind) or types.is_binary(kind) or types.is_large_binary(kind):
        return array
    if types.is_string_view(kind):
        return array.cast(pa.large_string())
    if types.is_binary_view(kind):
        return array.cast(pa.large_binary())
    if types.is_struct(kind) or types.is_map(kind) or types.is_list(kind) or types.is_large_list(kind):
        return pa.array(_rows_as_json(array.to_pylist()), pa.large_string())
    raise TypeError(
        f"an Arrow column of records holds JSON text (string, binary) or structs, not {kind}"
    )


def _rows_as_json(rows: list[Any]) -> list[str | None]:
    return [None if row is None else json.dumps(_without_nulls(row), ensure_ascii=False, default=str) for row in rows]


def _without_nulls(value: Any) -> Any:
    """A struct's value without its null fields: Arrow's schema gives every row every field."""
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        if value and isinstance(value[0], tuple) and all(isinstance(item, tuple) and len(item) == 2 for item in value):
            # A map column's value: (key, value) pairs.
            return {str(key): _without_nulls(item) for key, item in value if item is not None}
        return [_without_nulls(item) for item in value]
    return value
