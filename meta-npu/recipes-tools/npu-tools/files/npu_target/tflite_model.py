# SPDX-License-Identifier: MIT
"""A minimal reader of the TFLite flatbuffer: operator codes and the operators of each subgraph.

The board may have tflite_runtime without the generated schema module, so this reads the few
fields it needs straight from the bytes (tensorflow/lite/schema/schema.fbs field ids):
Model{version:0, operator_codes:1, subgraphs:2}, OperatorCode{deprecated_builtin_code:0,
custom_code:1, version:2, builtin_code:3}, SubGraph{operators:3}, Operator{opcode_index:0}.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path

from .errors import UsageError

FILE_IDENTIFIER = b"TFL3"
BUILTIN_CUSTOM = 32


@dataclass
class ModelSummary:
    path: str
    sha256: str
    custom_ops: list[str] = field(default_factory=list)
    ops_total: int = 0
    subgraphs: int = 0
    builtin_codes: list[int] = field(default_factory=list)


class _Buffer:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def u8(self, pos: int) -> int:
        return self.data[pos]

    def i8(self, pos: int) -> int:
        value: int = struct.unpack_from("<b", self.data, pos)[0]  # unpack_from gives tuple[Any, ...]
        return value

    def u16(self, pos: int) -> int:
        value: int = struct.unpack_from("<H", self.data, pos)[0]  # unpack_from gives tuple[Any, ...]
        return value

    def u32(self, pos: int) -> int:
        value: int = struct.unpack_from("<I", self.data, pos)[0]  # unpack_from gives tuple[Any, ...]
        return value

    def i32(self, pos: int) -> int:
        value: int = struct.unpack_from("<i", self.data, pos)[0]  # unpack_from gives tuple[Any, ...]
        return value

    def field_pos(self, table: int, field_id: int) -> int | None:
        vtable = table - self.i32(table)
        vtable_size = self.u16(vtable)
        slot = 4 + 2 * field_id
        if slot + 2 > vtable_size:
            return None
        offset = self.u16(vtable + slot)
        return table + offset if offset else None

    def indirect(self, pos: int) -> int:
        return pos + self.u32(pos)

    def vector(self, table: int, field_id: int) -> tuple[int, int]:
        """(start of elements, length) of a vector field; (0, 0) when absent."""
        pos = self.field_pos(table, field_id)
        if pos is None:
            return 0, 0
        vec = self.indirect(pos)
        return vec + 4, self.u32(vec)

    def tables(self, table: int, field_id: int) -> list[int]:
        start, length = self.vector(table, field_id)
        return [self.indirect(start + 4 * i) for i in range(length)]

    def string(self, table: int, field_id: int) -> str | None:
        pos = self.field_pos(table, field_id)
        if pos is None:
            return None
        vec = self.indirect(pos)
        length = self.u32(vec)
        return self.data[vec + 4 : vec + 4 + length].decode("utf-8", "replace")

    def scalar(self, table: int, field_id: int, kind: str, default: int) -> int:
        pos = self.field_pos(table, field_id)
        if pos is None:
            return default
        return {"i8": self.i8, "i32": self.i32, "u32": self.u32}[kind](pos)


def read_model(path: Path) -> ModelSummary:
    """Summarise a .tflite file; UsageError in one sentence if it is not a readable TFLite model."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"cannot read model {path} ({exc.strerror}); give an existing .tflite file."
        ) from None
    if len(data) < 8 or data[4:8] != FILE_IDENTIFIER:
        raise UsageError(
            f"{path} is not a TFLite model (no 'TFL3' flatbuffer identifier); give a .tflite file."
        )
    buf = _Buffer(data)
    try:
        model = buf.indirect(0)
        codes = []
        for code in buf.tables(model, 1):
            builtin = max(buf.scalar(code, 0, "i8", 0), buf.scalar(code, 3, "i32", 0))
            codes.append((builtin, buf.string(code, 1)))
        subgraphs = buf.tables(model, 2)
        custom: set[str] = set()
        used_builtins: set[int] = set()
        ops_total = 0
        for index, subgraph in enumerate(subgraphs):
            for op in buf.tables(subgraph, 3):
                builtin, custom_code = codes[buf.scalar(op, 0, "u32", 0)]
                if index == 0:
                    ops_total += 1
                used_builtins.add(builtin)
                if builtin == BUILTIN_CUSTOM and custom_code:
                    custom.add(custom_code)
    except (struct.error, IndexError):
        raise UsageError(f"{path} is a truncated or corrupt TFLite model; copy the file again.") from None
    return ModelSummary(
        path=str(path),
        sha256=hashlib.sha256(data).hexdigest(),
        custom_ops=sorted(custom),
        ops_total=ops_total,
        subgraphs=len(subgraphs),
        builtin_codes=sorted(used_builtins),
    )
