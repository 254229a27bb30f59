# SPDX-License-Identifier: MIT
"""Safe .npy loading for files that come from a board or a user: the header is checked before any
data is read.

A board is untrusted input, and `numpy.load` trusts the header: a lying shape makes it allocate
what the header claims, an object dtype needs pickle, a complex dtype slips through numeric
checks. `read_header` parses the header itself (`ast.literal_eval`, bounded length), allows only
bool, integer and real floating dtypes, and requires the declared data size to equal what the
file holds; `load` then reads exactly that many bytes. Every refusal is an `NpyError` whose
message is one sentence naming the file and the fix.
"""

from __future__ import annotations

import ast
import io
import math
import os
import select
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np

MAGIC = b"\x93NUMPY"
# numpy.lib.format refuses headers above 10 000 bytes by default too; np.save writes ~128.
MAX_HEADER_BYTES = 10_000
# kinds: b bool, i signed, u unsigned, f real floating point; at most 8 bytes per value.
ALLOWED_KINDS = "biuf"
MAX_ITEMSIZE = 8
MAX_DIMS = 64  # numpy's own limit
# A .npy read from a pipe (`<(…)`, a FIFO, /dev/stdin) is held whole in memory: at most this much.
MAX_PIPE_BYTES = 1 << 30


class NpyError(ValueError):
    """A .npy file cannot be used; the message is one sentence naming the file and the fix."""


@dataclass(frozen=True)
class NpyHeader:
    """What a checked .npy header declares, and where its data starts."""

    path: Path
    dtype: np.dtype
    shape: tuple[int, ...]
    fortran_order: bool
    data_offset: int

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def order(self) -> Literal["C", "F"]:
        """The data's memory order, as numpy's `order=` names it."""
        return "F" if self.fortran_order else "C"


def read_header(path: Path, max_bytes: int | None = None) -> NpyHeader:
    """The checked header of `path`; NpyError (one sentence) on anything np.save would not write,
    a refused dtype, a declared size that differs from the file's, or data above `max_bytes`."""
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO without a writer must not wait for one (a regular file ignores it)
        with os.fdopen(
            os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)), "rb"
        ) as stream:
            mode = os.fstat(stream.fileno()).st_mode
            if not stat.S_ISREG(mode):
                kind = "a pipe" if stat.S_ISFIFO(mode) else "not a regular file"
                raise NpyError(f"{path} is {kind}; give the path of a .npy file.")
            return _checked_header(stream, path, os.fstat(stream.fileno()).st_size, max_bytes)
    except FileNotFoundError:
        raise NpyError(f"{path} does not exist; give the path of a .npy file.") from None
    except IsADirectoryError:
        raise NpyError(f"{path} is a directory; give the path of a .npy file.") from None
    except OSError as exc:
        raise NpyError(f"{path} cannot be read ({exc.strerror or exc}); check the file.") from None


WRITER_WAIT_S = 2.0  # how long a FIFO without a writer is given to get one


def is_pipe(path: Path) -> bool:
    """Whether `path` is a FIFO or a character device (`<(…)`, /dev/stdin): read it with read_pipe."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def read_pipe(path: Path, limit: int = MAX_PIPE_BYTES) -> bytes:
    """All a pipe holds, at most `limit` bytes; a FIFO nobody writes to reads as empty after a
    bounded wait for a writer (WRITER_WAIT_S: a writer started just before may not have opened it
    yet), never blocks longer."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb", buffering=0) as stream:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                # Linux reports a FIFO readable once a writer has opened it and written or closed.
                poller = select.poll()
                poller.register(fd, select.POLLIN)
                poller.poll(int(WRITER_WAIT_S * 1000))
            os.set_blocking(fd, True)  # no writer: read() is end of file; a writer: wait for its data
            chunks, held = [], 0
            while chunk := stream.read(min(1 << 20, limit + 1 - held)):
                chunks.append(chunk)
                held += len(chunk)
                if held > limit:
                    raise NpyError(
                        f"{path} sent more than {limit} bytes; save the array to a file and give its path."
                    )
    except OSError as exc:
        raise NpyError(f"{path} cannot be read ({exc.strerror or exc}); check the file.") from None
    if not chunks:
        raise NpyError(f"{path} is a pipe that sent nothing (no writer); give a .npy file or pipe one in.")
    return b"".join(chunks)


def load_bytes(raw: bytes, name: str, max_bytes: int | None = None) -> np.ndarray:
    """The array held in `raw` (a .npy file's content, e.g. from stdin or a transfer), checked
    like a file; `name` is what the messages call it."""
    header = _checked_header(io.BytesIO(raw), Path(name), len(raw), max_bytes)
    flat: np.ndarray = np.frombuffer(raw, header.dtype, header.size, header.data_offset).copy()
    return flat.reshape(header.shape, order=header.order)


def _checked_header(stream: BinaryIO, path: Path, total: int, max_bytes: int | None) -> NpyHeader:
    raw, offset = _raw_header(stream, path)
    fields = _parse_fields(raw, path)
    if not isinstance(fields["fortran_order"], bool):
        raise _malformed(path, "fortran_order is not true or false")
    dtype, shape = _checked_dtype(fields["descr"], path), _checked_shape(fields["shape"], path)
    header = NpyHeader(path, dtype, shape, fields["fortran_order"], offset)
    held = total - offset
    if held != header.nbytes:
        raise NpyError(
            f"{path} declares shape {list(header.shape)} of {header.dtype.name} ({header.nbytes} bytes "
            f"of data) but holds {held} bytes; the file is truncated or its header is wrong, copy it again."
        )
    if max_bytes is not None and header.nbytes > max_bytes:
        raise NpyError(
            f"{path} holds {header.nbytes} bytes of data, more than the limit of {max_bytes}; "
            "save a smaller output or raise the limit."
        )
    return header


def load(path: Path, max_bytes: int | None = None) -> np.ndarray:
    """The array in `path`, read after `read_header` accepted it (never through pickle)."""
    header = read_header(path, max_bytes)
    flat = read_flat(header, 0, header.size)
    return flat.reshape(header.shape, order=header.order)


def read_flat(header: NpyHeader, start: int, count: int, into: np.ndarray | None = None) -> np.ndarray:
    """`count` values from element `start` on, in file order (C order unless fortran_order).

    `into` (a 1-D array of the header's dtype and at least `count` values) is filled and its first
    `count` values returned, so a caller streaming a large file reuses one buffer.
    """
    if start < 0 or count < 0 or start + count > header.size:
        raise ValueError(f"elements {start}..{start + count} are outside {header.path}'s {header.size}")
    buffer = np.empty(count, header.dtype) if into is None else into[:count]
    if count == 0:
        return buffer
    want = count * header.dtype.itemsize
    try:
        with header.path.open("rb") as stream:
            stream.seek(header.data_offset + start * header.dtype.itemsize)
            got = stream.readinto(buffer.view(np.uint8).data)
    except OSError as exc:
        raise NpyError(f"{header.path} cannot be read ({exc.strerror or exc}); check the file.") from None
    if got != want:
        raise NpyError(
            f"{header.path} ended after {got} of {want} bytes while being read; "
            "it changed while in use, copy it again."
        )
    return buffer


def _raw_header(stream: BinaryIO, path: Path) -> tuple[bytes, int]:
    lead = stream.read(len(MAGIC) + 2)
    if len(lead) < len(MAGIC) + 2 or not lead.startswith(MAGIC):
        raise NpyError(f"{path} is not a .npy file (no NUMPY magic); save arrays with numpy.save.")
    major = lead[len(MAGIC)]
    if major not in (1, 2, 3):
        raise NpyError(
            f"{path} is .npy format version {major}.{lead[-1]}, which this tool does not read; "
            "save it with numpy.save."
        )
    size_format = "<H" if major == 1 else "<I"
    size_bytes = stream.read(struct.calcsize(size_format))
    if len(size_bytes) != struct.calcsize(size_format):
        raise _malformed(path, "the header length is cut off")
    (length,) = struct.unpack(size_format, size_bytes)
    if length > MAX_HEADER_BYTES:
        raise _malformed(path, f"the header claims {length} bytes, more than {MAX_HEADER_BYTES}")
    raw = stream.read(length)
    if len(raw) != length:
        raise _malformed(path, "the header is cut off")
    encoding = "utf-8" if major == 3 else "latin-1"
    try:
        return raw.decode(encoding).encode("utf-8"), len(lead) + len(size_bytes) + length
    except UnicodeDecodeError:
        raise _malformed(path, "the header is not text") from None


def _parse_fields(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        fields = ast.literal_eval(raw.decode("utf-8"))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise _malformed(path, "the header is not a Python literal") from None
    if not isinstance(fields, dict) or set(fields) != {"descr", "fortran_order", "shape"}:
        raise _malformed(path, "the header does not hold exactly descr, fortran_order and shape")
    return fields


def _checked_dtype(descr: Any, path: Path) -> np.dtype:
    if not isinstance(descr, str):
        raise NpyError(f"{path} holds a structured array; save one plain numeric array per file.")
    try:
        dtype = np.dtype(descr)
    except (TypeError, ValueError):
        raise _malformed(path, f"the dtype {descr!r} is unknown") from None
    return check_dtype(dtype, path)


def check_dtype(dtype: np.dtype, path: Path | str) -> np.dtype:
    """`dtype` if it is bool, integer or real floating point of at most 8 bytes; else NpyError."""
    if dtype.kind == "O":
        raise NpyError(
            f"{path} holds Python objects (dtype object), which only pickle can load; "
            "save a numeric array instead."
        )
    if dtype.kind == "c":
        raise NpyError(
            f"{path} holds complex values ({dtype.name}), which cannot be compared as NPU outputs; "
            "save the real and imaginary parts as separate real arrays."
        )
    if dtype.kind not in ALLOWED_KINDS or dtype.itemsize > MAX_ITEMSIZE or dtype.fields is not None:
        raise NpyError(
            f"{path} holds {dtype.name} values, not numbers; save a bool, integer or float32/float64 array."
        )
    return dtype


def _checked_shape(shape: Any, path: Path) -> tuple[int, ...]:
    if (
        not isinstance(shape, tuple)
        or len(shape) > MAX_DIMS
        or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)
    ):
        raise _malformed(path, f"the shape {shape!r} is not a tuple of non-negative integers")
    return shape


def _malformed(path: Path, why: str) -> NpyError:
    return NpyError(f"{path} has a malformed .npy header ({why}); save the array again with numpy.save.")
