"""`audit_arrow`'s native reader trusts no Arrow array: offsets past the data, going backwards, or buffers too short
for the array's length and offset are a ValueError, never a read outside the buffers.

The arrays are built here by hand, as the Arrow C Data Interface lays them out (its `ArrowSchema` and `ArrowArray`
structs in PyCapsules), with ctypes: no pyarrow is needed, and an array can be as malformed as a buggy exporter or a
hostile file makes one.
"""

from __future__ import annotations

import ctypes
import struct

import pytest

from mcp_unknown_keys import Report
from mcp_unknown_keys._native import audit_arrow_arrays

TOOLS = [{"name": "f", "inputSchema": {"properties": {"q": {}}}}]
RECORD = b'{"type":"tool_use","id":"1","name":"f","input":{"q":1,"limt":2}}'


class ArrowSchema(ctypes.Structure):
    pass


class ArrowArray(ctypes.Structure):
    pass


SCHEMA_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowSchema))
ARRAY_RELEASE = ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))
ArrowSchema._fields_ = [
    ("format", ctypes.c_char_p),
    ("name", ctypes.c_char_p),
    ("metadata", ctypes.c_char_p),
    ("flags", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("children", ctypes.c_void_p),
    ("dictionary", ctypes.c_void_p),
    ("release", SCHEMA_RELEASE),
    ("private_data", ctypes.c_void_p),
]
ArrowArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.c_void_p),
    ("dictionary", ctypes.c_void_p),
    ("release", ARRAY_RELEASE),
    ("private_data", ctypes.c_void_p),
]

# The capsules are released by no destructor: these callbacks only need to be there.
NO_SCHEMA_RELEASE = SCHEMA_RELEASE(lambda schema: None)
NO_ARRAY_RELEASE = ARRAY_RELEASE(lambda array: None)

capsule_new = ctypes.pythonapi.PyCapsule_New
capsule_new.restype = ctypes.py_object
capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class HandBuilt:
    """One string array: its structs, buffers and capsules, kept alive together."""

    def __init__(
        self,
        offsets: list[int],
        data: bytes,
        *,
        large: bool = False,
        length: int | None = None,
        offset: int = 0,
        validity: bytes | None = None,
        sizes: list[int] | None = None,
    ) -> None:
        self.format = ctypes.create_string_buffer(b"U" if large else b"u")
        self.names = (ctypes.create_string_buffer(b"arrow_schema"), ctypes.create_string_buffer(b"arrow_array"))
        packed = struct.pack(f"<{len(offsets)}{'q' if large else 'i'}", *offsets)
        self.held = [ctypes.create_string_buffer(part, len(part)) if part is not None else None for part in (validity, packed, data)]
        self.pointers = (ctypes.c_void_p * 3)(*[None if part is None else ctypes.addressof(part) for part in self.held])
        self.schema = ArrowSchema(format=ctypes.cast(self.format, ctypes.c_char_p), release=NO_SCHEMA_RELEASE)
        self.array = ArrowArray(
            length=len(offsets) - 1 if length is None else length,
            null_count=0 if validity is None else 1,
            offset=offset,
            n_buffers=3,
            buffers=ctypes.cast(self.pointers, ctypes.POINTER(ctypes.c_void_p)),
            release=NO_ARRAY_RELEASE,
        )
        self.sizes = [0 if part is None else len(part) for part in (validity, packed, data)] if sizes is None else sizes

    def exported(self) -> tuple[object, object, list[int]]:
        schema = capsule_new(ctypes.addressof(self.schema), ctypes.cast(self.names[0], ctypes.c_char_p), None)
        array = capsule_new(ctypes.addressof(self.array), ctypes.cast(self.names[1], ctypes.c_char_p), None)
        return schema, array, self.sizes


def audit(*arrays: HandBuilt, names: list[HandBuilt] | None = None) -> Report:
    return audit_arrow_arrays(
        [array.exported() for array in arrays],
        TOOLS,
        names=None if names is None else [array.exported() for array in names],
    )


def test_a_well_formed_array_built_by_hand_is_read():
    data = RECORD + b"not JSON"
    for large in (False, True):
        # Three values, a slice of the last two: the record, a null, and text that is no JSON.
        array = HandBuilt([0, 0, len(RECORD), len(RECORD), len(data)], data, large=large, length=3, offset=1, validity=b"\x0b")
        report = audit(array)
        assert [(f["key"], f["calls"]) for f in report.findings] == [("limt", 1)]
        assert report.lines == {"read": 2, "not_json": 1, "not_utf8": 0, "too_deep": 0, "too_long": 0, "idle": 0}


@pytest.mark.parametrize(
    "array, why",
    [
        # An offset 16 TiB (2 GiB for 32-bit offsets) past a data buffer of 64 bytes: read in place, a SIGSEGV.
        (HandBuilt([1 << 44, (1 << 44) + 64], RECORD, large=True), "its data buffer holds 64 bytes, and its length and offset need 17592186044480"),
        (HandBuilt([0, 1 << 44], RECORD, large=True), "its data buffer holds 64 bytes, and its length and offset need 17592186044416"),
        (HandBuilt([0, 2**31 - 1], RECORD), "its data buffer holds 64 bytes, and its length and offset need 2147483647"),
        (HandBuilt([0, len(RECORD) + 1], RECORD), "its data buffer holds 64 bytes, and its length and offset need 65"),
        (HandBuilt([0, 10, 5], RECORD), "its offset 2 goes backwards"),
        (HandBuilt([-8, 10], RECORD), "its offset 0 is negative"),
        (HandBuilt([0, -1], RECORD, large=True), "its offset 1 is negative"),
        # A length or an offset past the offsets buffer: the offsets read would be anything.
        (HandBuilt([0, len(RECORD)], RECORD, length=1000), "its offsets buffer holds 8 bytes, and its length and offset need 4004"),
        (HandBuilt([0, len(RECORD)], RECORD, offset=1 << 40), "its offsets buffer holds 8 bytes"),
        (HandBuilt([0, len(RECORD)], RECORD, length=1 << 62, offset=1 << 62, large=True), "overflow"),
        # A validity bitmap of one byte for 100 values.
        (HandBuilt(list(range(101)), b"x" * 100, validity=b"\xff"), "its validity bitmap buffer holds 1 bytes, and its length and offset need 13"),
        # Buffers said shorter than they are, as an exporter's lengths say: they are what is trusted.
        (HandBuilt([0, len(RECORD)], RECORD, sizes=[0, 8, 10]), "its data buffer holds 10 bytes"),
        (HandBuilt([0, len(RECORD)], RECORD, sizes=[0, 8]), "three lengths"),
    ],
)
def test_a_malformed_array_is_a_value_error_before_anything_is_read(array: HandBuilt, why: str):
    with pytest.raises(ValueError, match="malformed Arrow array|three lengths") as raised:
        audit(array)
    assert why in str(raised.value)


def test_a_malformed_names_array_is_refused_too():
    records = HandBuilt([0, len(RECORD)], RECORD)
    with pytest.raises(ValueError, match="its data buffer holds 1 bytes"):
        audit(records, names=[HandBuilt([0, 1 << 44], b"a", large=True)])
    named = audit(records, names=[HandBuilt([0, 5], b"a.log")])
    assert [group["group"]["file"] for group in named.by("file")] == ["a.log"]
