# SPDX-License-Identifier: MIT
"""The safe .npy loader: everything numpy.save writes for the allowed dtypes loads exactly as
numpy.load loads it; pickle, complex, structured, lying or malformed headers are refused with one
sentence before any data is read."""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import numpy as np
import pytest

from npu_accept import npyio

RNG = np.random.default_rng(13)


def _save(tmp_path: Path, array: np.ndarray, name: str = "a.npy", **kwargs) -> Path:
    path = tmp_path / name
    with path.open("wb") as stream:
        np.lib.format.write_array(stream, array, **kwargs)
    return path


def _raw(tmp_path: Path, header: str, data: bytes = b"", version: int = 1) -> Path:
    text = header.encode("latin-1")
    size = struct.pack("<H" if version == 1 else "<I", len(text))
    path = tmp_path / "raw.npy"
    path.write_bytes(npyio.MAGIC + bytes([version, 0]) + size + text + data)
    return path


@pytest.mark.parametrize(
    "dtype",
    ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "float16", "float32", ">f8"],
)
def test_round_trip_matches_numpy_load(tmp_path: Path, dtype: str) -> None:
    array = (RNG.normal(0, 50, (3, 4, 5))).astype(dtype)
    path = _save(tmp_path, array)
    loaded = npyio.load(path)
    assert loaded.dtype == np.load(path).dtype and loaded.shape == (3, 4, 5)
    np.testing.assert_array_equal(loaded, np.load(path))


@pytest.mark.parametrize(
    "array",
    [
        np.float32(2.5).reshape(()),
        np.zeros((0, 7), np.float32),
        np.asfortranarray(np.arange(24, dtype=np.int16).reshape(4, 6)),
    ],
    ids=["0-d", "empty", "fortran"],
)
def test_shapes_and_orders(tmp_path: Path, array: np.ndarray) -> None:
    loaded = npyio.load(_save(tmp_path, array))
    assert loaded.shape == array.shape
    np.testing.assert_array_equal(loaded, array)


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_format_versions(tmp_path: Path, version: tuple[int, int]) -> None:
    array = np.arange(10, dtype=np.float32)
    np.testing.assert_array_equal(npyio.load(_save(tmp_path, array, version=version)), array)


def test_read_flat_streams_in_pieces_into_one_buffer(tmp_path: Path) -> None:
    array = RNG.normal(size=1000).astype(np.float32)
    header = npyio.read_header(_save(tmp_path, array))
    buffer = np.empty(300, np.float32)
    pieces = [
        npyio.read_flat(header, start, min(300, 1000 - start), buffer).copy() for start in range(0, 1000, 300)
    ]
    np.testing.assert_array_equal(np.concatenate(pieces), array)


def _refused(path: Path, *words: str, max_bytes: int | None = None) -> str:
    with pytest.raises(npyio.NpyError) as info:
        npyio.load(path, max_bytes=max_bytes)
    message = str(info.value)
    assert "\n" not in message and message.endswith(".") and str(path) in message
    for word in words:
        assert word in message
    return message


def test_object_array_needs_pickle_refused(tmp_path: Path) -> None:
    path = _save(tmp_path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    _refused(path, "dtype object", "pickle")


def test_plain_pickle_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.npy"
    path.write_bytes(pickle.dumps(np.arange(3)))
    _refused(path, "not a .npy file")


@pytest.mark.parametrize(
    "array, words",
    [
        (np.ones(4, np.complex64), ("complex64", "real")),
        (np.ones(4, np.complex128), ("complex128",)),
        (np.array(["ab", "c"]), ("not numbers",)),
        (np.array(["2026-01-01"], dtype="datetime64[D]"), ("not numbers",)),
        (np.ones(4, np.longdouble), ("not numbers",)),
        (np.zeros(3, dtype=[("x", "f4"), ("y", "i2")]), ("structured",)),
    ],
    ids=["complex64", "complex128", "str", "datetime", "longdouble", "structured"],
)
def test_refused_dtypes(tmp_path: Path, array: np.ndarray, words: tuple[str, ...]) -> None:
    _refused(_save(tmp_path, array), *words)


def test_lying_header_is_refused_before_allocating(tmp_path: Path) -> None:
    # 10^12 float32 values declared, 40 bytes present: numpy.load would try to allocate 4 TB.
    path = _raw(tmp_path, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", b"\0" * 40)
    _refused(path, "4000000000000 bytes", "holds 40 bytes", "copy it again")


def test_truncated_and_padded_files_refused(tmp_path: Path) -> None:
    path = _save(tmp_path, np.arange(100, dtype=np.int32))
    data = path.read_bytes()
    path.write_bytes(data[:-4])
    _refused(path, "holds 396 bytes")
    path.write_bytes(data + b"junk")
    _refused(path, "holds 404 bytes")


@pytest.mark.parametrize(
    "header, words",
    [
        ("__import__('os').system('true')", ("not a Python literal",)),
        ("{'descr': '<f4', 'shape': (2,)}", ("exactly descr",)),
        ("{'descr': '<f4', 'fortran_order': 'no', 'shape': (2,)}", ("fortran_order",)),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", ("shape",)),
        ("{'descr': '<f4', 'fortran_order': False, 'shape': (True,)}", ("shape",)),
        ("{'descr': '<q9', 'fortran_order': False, 'shape': (2,)}", ("dtype",)),
        ("[" * 1000 + "]" * 1000, ("not a Python literal",)),
    ],
    ids=["code", "missing-key", "fortran", "negative", "bool-dim", "unknown-dtype", "deep"],
)
def test_malformed_headers_refused(tmp_path: Path, header: str, words: tuple[str, ...]) -> None:
    _refused(_raw(tmp_path, header, b"\0" * 8), "malformed .npy header", *words)


def test_header_length_and_version_limits(tmp_path: Path) -> None:
    path = tmp_path / "long.npy"
    path.write_bytes(npyio.MAGIC + bytes([2, 0]) + struct.pack("<I", 2**31) + b"{")
    _refused(path, "claims 2147483648 bytes")
    path.write_bytes(npyio.MAGIC + bytes([9, 0]) + b"\0" * 8)
    _refused(path, "version 9.0")
    path.write_bytes(npyio.MAGIC + bytes([1, 0]) + struct.pack("<H", 500) + b"{}")
    _refused(path, "cut off")


def test_max_bytes_limit(tmp_path: Path) -> None:
    path = _save(tmp_path, np.zeros(1000, np.float32))
    assert npyio.load(path, max_bytes=4000).size == 1000
    _refused(path, "more than the limit of 3999", max_bytes=3999)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    _refused(tmp_path / "nope.npy", "does not exist")
    _refused(tmp_path, "is a directory")


def test_load_bytes_checks_like_a_file(tmp_path: Path) -> None:
    array = RNG.normal(size=(3, 5)).astype(np.float32)
    data = _save(tmp_path, array).read_bytes()
    np.testing.assert_array_equal(npyio.load_bytes(data, "stdin"), array)
    with pytest.raises(npyio.NpyError, match="stdin declares shape"):
        npyio.load_bytes(data[:-1], "stdin")
    with pytest.raises(npyio.NpyError, match="board.npy holds complex"):
        npyio.load_bytes(_save(tmp_path, np.ones(2, np.complex64)).read_bytes(), "board.npy")
