# SPDX-License-Identifier: MIT
"""Read a pair of tensors in chunks and accumulate, in float64, what a comparison verdict needs.

A `Tensor` is an array in memory or a .npy file checked by npyio, read as flat C-order chunks
small enough to stay in the CPU cache; `stream` passes once over the output and the reference and
returns sums, extremes, per-feature row statistics, capped distinct-value counts and top-k
agreement along the class axis. No float64 copy of a whole tensor, no sort of a whole tensor, and
no BLAS: the sums go through einsum's and the ufuncs' own loops, so one thread per board stays
one thread.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept import npyio

QuantParams = tuple[float, int]

# Elements per chunk: small enough that a chunk's float64 copies stay in the CPU cache.
CHUNK_ELEMENTS = 1 << 16
# Rows of a matrix up to this long are read whole (the identical-rows check needs them);
# longer rows, and vectors longer than a chunk, are streamed in pieces.
MAX_ROW_FEATURES = 1 << 20
MIN_ROWS_FOR_ROW_CHECK = 4
# A reference row is a probability distribution when it sums to 1 within this, widened by
# the quantization step times sqrt(classes) (rounding of a quantized softmax).
DISTRIBUTION_SUM_TOL = 0.05
# Distinct values are first looked for among a chunk's first cap * this values.
_HEAD_PER_CAP = 16


@dataclass(frozen=True)
class Tensor:
    """A tensor to judge, read as flat C-order chunks: from memory or from a checked .npy file."""

    shape: tuple[int, ...]
    dtype: np.dtype
    read: Callable[[int, int], np.ndarray]
    quant: QuantParams = (0.0, 0)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @classmethod
    def from_array(cls, array: Any, quant: QuantParams | None = None) -> Tensor:
        """An array in memory (a view of it; a non-C-contiguous array is copied once, in its dtype)."""
        values = np.asarray(array)
        flat = np.ravel(values)
        return cls(
            values.shape, values.dtype, lambda start, count: flat[start : start + count], quant_params(quant)
        )

    @classmethod
    def from_npy(cls, path: Path, quant: QuantParams | None = None) -> Tensor:
        """A .npy file checked by npyio and read one chunk at a time (Fortran order: loaded whole)."""
        header = npyio.read_header(Path(path))
        if header.fortran_order and len(header.shape) > 1:
            return cls.from_array(npyio.load(Path(path)), quant)
        buffer = np.empty(Layout.of(header.shape).largest_chunk, header.dtype)  # reused by every read
        return cls(
            header.shape,
            header.dtype,
            lambda start, count: npyio.read_flat(
                header, start, count, buffer if count <= buffer.size else None
            ),
            quant_params(quant),
        )


def quant_params(quant: QuantParams | None) -> QuantParams:
    """(scale, zero point) with None and missing values as 0 (no dequantization)."""
    if quant is None:
        return 0.0, 0
    return float(quant[0] or 0.0), int(quant[1] or 0)


def as_tensor(value: Any, quant: QuantParams | None) -> Tensor:
    """`value` (an array or a Tensor) as a Tensor; `quant`, when given, replaces the Tensor's."""
    if isinstance(value, Tensor):
        return value if quant is None else Tensor(value.shape, value.dtype, value.read, quant_params(quant))
    return Tensor.from_array(value, quant)


def top_k_mask(rows: np.ndarray, k: int) -> np.ndarray:
    """Per row, True at the k largest values (ties at the boundary: the lowest indices)."""
    width = rows.shape[1]
    kth = np.partition(rows, width - k, axis=1)[:, width - k : width - k + 1]
    above = rows > kth
    equal = rows == kth
    room = k - np.count_nonzero(above, axis=1, keepdims=True)
    mask: np.ndarray = above | (equal & (np.cumsum(equal, axis=1) <= room))  # numpy's | on these is Any
    return mask


@dataclass(frozen=True)
class Layout:
    """Rows and features of the squeezed shape: the class axis and the identical-rows check."""

    size: int
    rows: int
    features: int
    matrix: bool  # two or more axes longer than 1

    @classmethod
    def of(cls, shape: tuple[int, ...]) -> Layout:
        squeezed = [n for n in shape if n != 1]
        size = math.prod(shape)
        features = squeezed[-1] if squeezed else 1
        return cls(size, size // features if features else 0, features, len(squeezed) >= 2)

    @property
    def whole_rows(self) -> bool:
        """Chunks hold whole rows: short rows, or a matrix whose rows the row check compares."""
        return self.features <= CHUNK_ELEMENTS or (self.matrix and self.features <= MAX_ROW_FEATURES)

    @property
    def row_check(self) -> bool:
        return self.matrix and self.whole_rows and self.rows >= MIN_ROWS_FOR_ROW_CHECK and self.features >= 2

    @property
    def largest_chunk(self) -> int:
        if self.whole_rows:
            return min(self.size, max(1, CHUNK_ELEMENTS // max(self.features, 1)) * max(self.features, 1))
        return min(self.features, CHUNK_ELEMENTS)

    def chunks(self) -> Iterator[tuple[int, int]]:
        """(start, stop) element ranges: whole rows, or pieces of one long row."""
        if self.whole_rows:
            step = max(1, CHUNK_ELEMENTS // max(self.features, 1)) * max(self.features, 1)
            for start in range(0, self.size, step):
                yield start, min(start + step, self.size)
            return
        for row_start in range(0, self.size, self.features):
            row_stop = row_start + self.features
            for start in range(row_start, row_stop, CHUNK_ELEMENTS):
                yield start, min(start + CHUNK_ELEMENTS, row_stop)


class Distinct:
    """Distinct values seen, counted up to a cap (no sort of the whole tensor)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.values: list[Any] = []

    def add(self, chunk: np.ndarray) -> None:
        if len(self.values) >= self.cap:
            return
        # A healthy tensor reaches the cap within a chunk's first values: one small sort of them
        # settles it, instead of a pass over the whole chunk per distinct value. Taken only when
        # it reaches the cap (np.unique folds NaNs into one, the passes below count each NaN).
        head = chunk[: _HEAD_PER_CAP * self.cap]
        known = np.asarray(self.values, chunk.dtype)
        found = np.unique(np.concatenate([known, head]) if known.size else head)
        if found.size >= self.cap:
            self.values = list(found[: self.cap])
            return
        rest = chunk[np.isin(chunk, self.values, invert=True)] if self.values else chunk
        while rest.size and len(self.values) < self.cap:
            self.values.append(rest[0])
            rest = rest[rest != rest[0]]

    @property
    def count(self) -> int:
        return len(self.values)


class Moments:
    """What the detectors and metrics need of one tensor, accumulated chunk by chunk."""

    def __init__(self, layout: Layout, distinct_cap: int) -> None:
        self.count = 0
        self.total = 0.0
        self.squares = 0.0
        self.low = math.inf
        self.high = -math.inf
        self.nonfinite = 0
        self.first_row: np.ndarray | None = None
        self.distinct = Distinct(distinct_cap)
        width = layout.features if layout.row_check else 0
        self.col_total = np.zeros(width)
        self.col_squares = np.zeros(width)

    def add(self, values: np.ndarray, raw: np.ndarray, layout: Layout) -> tuple[float, float]:
        """Take one chunk; returns its lowest and highest value."""
        squares = float(np.einsum("i,i->", values, values))
        if not math.isfinite(squares):
            self.nonfinite += int(values.size - np.count_nonzero(np.isfinite(values)))
        if self.first_row is None:
            self.first_row = values[: min(layout.features, 6)].copy()
        self.count += values.size
        self.total += float(np.sum(values))
        self.squares += squares
        low, high = float(np.min(values)), float(np.max(values))
        self.low, self.high = min(self.low, low), max(self.high, high)
        self.distinct.add(raw)
        if self.col_total.size:
            rows = values.reshape(-1, layout.features)
            self.col_total += np.sum(rows, axis=0)
            self.col_squares += np.einsum("ij,ij->j", rows, rows)
        return low, high

    @property
    def finite(self) -> bool:
        return self.nonfinite == 0 and math.isfinite(self.low) and math.isfinite(self.high)

    @property
    def spread(self) -> float:
        return self.high - self.low if self.count else 0.0

    @property
    def std(self) -> float:
        if not self.count:
            return 0.0
        mean = self.total / self.count
        return math.sqrt(max(self.squares / self.count - mean * mean, 0.0))

    def row_spread(self, rows: int) -> float:
        """Mean over features of the standard deviation across rows (0 when the rows are equal)."""
        mean = self.col_total / rows
        return float(np.mean(np.sqrt(np.maximum(self.col_squares / rows - mean * mean, 0.0))))


class TopK:
    """Top-k agreement along the class axis, streamed; switches itself off (auto mode) as soon as
    the reference is seen not to be a probability distribution per row."""

    def __init__(self, layout: Layout, k: int, asked: bool, ref_step: float) -> None:
        self.layout = layout
        self.k = max(1, min(k, layout.features - 1 if not asked else layout.features))
        self.asked = asked
        self.value_tol = ref_step + 1e-6
        self.sum_tol = DISTRIBUTION_SUM_TOL + ref_step * math.sqrt(layout.features)
        self.active = layout.features >= 2 and layout.size > 0
        self.why_not = "" if self.active else "a single value has no class axis"
        self.agreed = 0.0
        self.rows_done = 0
        self.row_sum = 0.0
        self.best: tuple[Best, Best] = (Best(self.k), Best(self.k))

    def add(self, a: np.ndarray, b: np.ndarray, start: int, low: float, high: float) -> None:
        if not self.active:
            return
        if not self.asked and (low < -self.value_tol or high > 1.0 + self.value_tol):
            self._off("its values leave [0, 1]")
            return
        features = self.layout.features
        if self.layout.whole_rows:
            ra, rb = a.reshape(-1, features), b.reshape(-1, features)
            if not self.asked and np.any(np.abs(np.sum(ra, axis=1) - 1.0) > self.sum_tol):
                self._off("its rows do not sum to 1")
                return
            self.agreed += float(np.count_nonzero(top_k_mask(ra, self.k) & top_k_mask(rb, self.k))) / self.k
            self.rows_done += ra.shape[0]
            return
        self._add_piece(a, b, start % features)

    def _add_piece(self, a: np.ndarray, b: np.ndarray, offset: int) -> None:
        self.row_sum += float(np.sum(a))
        if not self.asked and self.row_sum > 1.0 + self.sum_tol:
            self._off("its rows do not sum to 1")
            return
        self.best[0].add(a, offset)
        self.best[1].add(b, offset)
        if offset + a.size == self.layout.features:
            if not self.asked and abs(self.row_sum - 1.0) > self.sum_tol:
                self._off("its rows do not sum to 1")
                return
            common = np.intersect1d(self.best[0].index, self.best[1].index).size
            self.agreed += common / self.k
            self.rows_done += 1
            self.row_sum = 0.0
            self.best = (Best(self.k), Best(self.k))

    def _off(self, why: str) -> None:
        self.active = False
        self.why_not = f"the reference is not class scores ({why})"

    def result(self) -> tuple[float | None, str]:
        features = self.layout.features
        if not self.active or not self.rows_done:
            return None, f"not judged: {self.why_not or 'nothing to rank'}"
        per = "per row of" if self.layout.rows > 1 else "over"
        why = "asked for" if self.asked else "the reference rows are probability distributions"
        return self.agreed / self.rows_done, f"top-{self.k} {per} {features} classes ({why})"


class Best:
    """The k largest values of one long row seen so far, with their indices (ties: lower index)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.value = np.empty(0)
        self.index = np.empty(0, np.int64)

    def add(self, piece: np.ndarray, offset: int) -> None:
        if self.index.size == self.k:
            picked = np.flatnonzero(piece > self.value.min())  # equal values lose to lower indices
        else:
            picked = np.arange(piece.size)
        if picked.size > self.k:
            picked = np.flatnonzero(top_k_mask(piece[None], self.k)[0])
        value = np.concatenate([self.value, piece[picked]])
        index = np.concatenate([self.index, picked + offset])
        keep = np.lexsort((index, -value))[: self.k]
        self.value, self.index = value[keep], index[keep]


@dataclass
class PairSums:
    ab: float = 0.0
    dd: float = 0.0
    max_abs: float = 0.0


class Buffers:
    """Reused float64 chunk buffers: no float64 copy of a whole tensor is ever made."""

    def __init__(self, size: int) -> None:
        self.a = np.empty(size)
        self.b = np.empty(size)
        self.d = np.empty(size)


def dequantize_into(raw: np.ndarray, quant: QuantParams, buffer: np.ndarray) -> np.ndarray:
    values = buffer[: raw.size]
    np.copyto(values, raw, casting="unsafe")
    scale, zero = quant
    if scale and raw.dtype.kind in "iu":
        values -= float(zero)
        values *= scale
    return values


@dataclass
class Stream:
    """One pass over the output (and the reference when given): everything the verdict needs."""

    out: Moments
    ref: Moments | None
    pair: PairSums


def stream(
    out: Tensor, ref: Tensor | None, layout: Layout, top_k: TopK | None, distinct_caps: tuple[int, int]
) -> Stream:
    """One pass over both tensors; distinct values are counted up to `distinct_caps` (out, ref)."""
    result = Stream(
        Moments(layout, distinct_caps[0]),
        None if ref is None else Moments(layout, distinct_caps[1]),
        PairSums(),
    )
    buffers = Buffers(layout.largest_chunk)
    for start, stop in layout.chunks():
        raw_b = out.read(start, stop - start)
        b = dequantize_into(raw_b, out.quant, buffers.b)
        result.out.add(b, raw_b, layout)
        if ref is None or result.ref is None:
            continue
        raw_a = ref.read(start, stop - start)
        a = dequantize_into(raw_a, ref.quant, buffers.a)
        low, high = result.ref.add(a, raw_a, layout)
        d = np.subtract(a, b, out=buffers.d[: a.size])
        result.pair.ab += float(np.einsum("i,i->", a, b))
        result.pair.dd += float(np.einsum("i,i->", d, d))
        result.pair.max_abs = max(result.pair.max_abs, float(np.max(d)), -float(np.min(d)))
        if top_k is not None:
            top_k.add(a, b, start, low, high)
    return result
