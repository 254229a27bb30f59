# SPDX-License-Identifier: MIT
"""Compare an NPU output tensor with a reference after dequantization, and detect degenerate outputs.

Metrics (TPU-MLIR / RKNN practice): cosine similarity, euclidean similarity 1 - ||a-b|| / ||(a+b)/2||,
SQNR in dB, max abs error, and top-k agreement where the tensor holds class scores. Cosine alone
is blind to scale and offset: a constant uint8 128 scores 0.9989 against a raw uint8 reference
with zero point 128, so integers are always dequantized first and a degenerate-output detector
runs before any metric (constant or near-constant tensors, rows identical across anchors,
NaN/Inf, all zeros, too few distinct values).

Top-k agreement is judged only along a class axis: the last axis of the squeezed shape, per row
(a classification vector is one row). It applies when the profile asks for it (`top_k` or
`top_k_agree` among the model's thresholds) or, by default, when every row of the reference is a
probability distribution. Detector, landmark and feature tensors are judged by the similarity
measures and the degenerate detector only: near-ties among their background scores reorder under
int8 noise, and a top-k over them would call a healthy board broken.

Both tensors are read in chunks (`Tensor`: an array in memory or a checked .npy file) and
accumulated in float64, so memory stays near one chunk whatever the tensor size. The math uses
numpy's own loops (einsum, ufunc reductions), never BLAS: the suite compares from one thread per
board, and a multithreaded BLAS call from each of them at once slows every one of them down.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from npu_accept import npyio

QuantParams = tuple[float, int]

DEFAULT_THRESHOLDS: dict[str, float] = {
    "cosine": 0.99,
    "euclid": 0.90,
    "sqnr_db": 20.0,
    "top_k": 5,
    "top_k_agree": 0.8,
}
KNOWN_THRESHOLDS = ("cosine", "euclid", "sqnr_db", "top_k", "top_k_agree", "max_abs")
TOP_K_KEYS = ("top_k", "top_k_agree")
SQNR_CAP_DB = 200.0
# A tensor whose spread is below this fraction of the reference's spread has collapsed.
COLLAPSE_RATIO = 0.01
# Without a reference: spread below this (relative to the magnitude) is a constant.
CONSTANT_RTOL = 1e-6
MIN_ROWS_FOR_ROW_CHECK = 4
FEW_DISTINCT_OUT = 3
FEW_DISTINCT_REF = 16
# Elements per chunk: small enough that a chunk's float64 copies stay in the CPU cache.
CHUNK_ELEMENTS = 1 << 16
# Rows of a matrix up to this long are read whole (the identical-rows check needs them);
# longer rows, and vectors longer than a chunk, are streamed in pieces.
MAX_ROW_FEATURES = 1 << 20
# A reference row is a probability distribution when it sums to 1 within this, widened by
# the quantization step times sqrt(classes) (rounding of a quantized softmax).
DISTRIBUTION_SUM_TOL = 0.05


@dataclass(frozen=True)
class Degeneracy:
    """A degenerate output: `pattern` is a stable name, `reason` one sentence without the period.

    Patterns: empty, non-finite, all-zero, constant, near-constant, identical-rows, few-distinct.
    """

    pattern: str
    reason: str


@dataclass
class Verdict:
    """The outcome of one comparison: metrics, pass/fail and one sentence saying why."""

    passed: bool
    sentence: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    degenerate: str | None = None
    thresholds: dict[str, float] = field(default_factory=dict)
    pattern: str | None = None  # Degeneracy.pattern when the output is degenerate
    top_k_rule: str = ""  # whether and why top-k agreement was judged

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "sentence": self.sentence,
            "metrics": self.metrics,
            "degenerate": self.degenerate,
            "pattern": self.pattern,
            "thresholds": self.thresholds,
            "top_k_rule": self.top_k_rule,
        }


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
        values = np.asarray(array)
        flat = np.ravel(values)  # a view unless the array is not C-contiguous
        return cls(
            values.shape, values.dtype, lambda start, count: flat[start : start + count], _quant(quant)
        )

    @classmethod
    def from_npy(cls, path: Path, quant: QuantParams | None = None) -> Tensor:
        """A .npy file checked by npyio and read one chunk at a time (Fortran order: loaded whole)."""
        header = npyio.read_header(Path(path))
        if header.fortran_order and len(header.shape) > 1:
            return cls.from_array(npyio.load(Path(path)), quant)
        buffer = np.empty(min(header.size, max(CHUNK_ELEMENTS, MAX_ROW_FEATURES)), header.dtype)
        return cls(
            header.shape,
            header.dtype,
            lambda start, count: npyio.read_flat(
                header, start, count, buffer if count <= buffer.size else None
            ),
            _quant(quant),
        )


def _quant(quant: QuantParams | None) -> QuantParams:
    if quant is None:
        return 0.0, 0
    return float(quant[0] or 0.0), int(quant[1] or 0)


def _as_tensor(value: Any, quant: QuantParams | None) -> Tensor:
    if isinstance(value, Tensor):
        return value if quant is None else Tensor(value.shape, value.dtype, value.read, _quant(quant))
    return Tensor.from_array(value, quant)


def dequantize(array: np.ndarray, scale: float = 0.0, zero_point: int = 0) -> np.ndarray:
    """float64 values: integers with a non-zero scale become (q - zero_point) * scale."""
    values = np.asarray(array)
    result = values.astype(np.float64)
    if np.issubdtype(values.dtype, np.integer) and scale:
        result -= float(zero_point)
        result *= float(scale)
    return result


def thresholds_from_profile(raw: Mapping[str, Any] | None) -> dict[str, float]:
    """Profile thresholds merged over the defaults; ValueError naming an unknown key or bad value."""
    merged = dict(DEFAULT_THRESHOLDS)
    for key, value in (raw or {}).items():
        if key not in KNOWN_THRESHOLDS:
            raise ValueError(f"unknown threshold '{key}'; use one of {', '.join(KNOWN_THRESHOLDS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"threshold '{key}' must be a number, not {value!r}")
        merged[key] = float(value)
    if merged["top_k"] < 1 or merged["top_k"] != int(merged["top_k"]):
        raise ValueError(f"threshold 'top_k' must be a whole number of at least 1, not {merged['top_k']:g}")
    return merged


# --- metric definitions on whole arrays (small tensors, tests, other tools) ----------------------


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """Sum of products in float64 through einsum's own loop (np.dot would go through BLAS)."""
    return float(np.einsum("i,i->", np.ravel(a), np.ravel(b), dtype=np.float64, casting="unsafe"))


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return _cosine_from_sums(_dot(a, a), _dot(b, b), _dot(a, b))


def euclid_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 - ||a-b|| / ||(a+b)/2|| (TPU-MLIR's definition); 1.0 for identical, 0.0 if undefined."""
    diff = np.subtract(a, b, dtype=np.float64)
    return _euclid_from_sums(_dot(a, a), _dot(b, b), _dot(a, b), _dot(diff, diff))


def sqnr_db(ref: np.ndarray, out: np.ndarray) -> float:
    diff = np.subtract(ref, out, dtype=np.float64)
    return _sqnr_from_sums(_dot(ref, ref), _dot(diff, diff))


def top_k_agreement(ref: np.ndarray, out: np.ndarray, k: int) -> float:
    """Share of the reference's k largest entries that are also among the output's k largest.

    Ties at the k-th value go to the lower index (what a stable sort would pick), found with a
    partition instead of a full sort.
    """
    a, b = np.ravel(ref).astype(np.float64), np.ravel(out).astype(np.float64)
    k = max(1, min(int(k), a.size))
    return float(np.count_nonzero(_top_k_mask(a[None], k) & _top_k_mask(b[None], k))) / k


def _top_k_mask(rows: np.ndarray, k: int) -> np.ndarray:
    """Per row, True at the k largest values (ties at the boundary: the lowest indices)."""
    width = rows.shape[1]
    kth = np.partition(rows, width - k, axis=1)[:, width - k : width - k + 1]
    above = rows > kth
    equal = rows == kth
    room = k - np.count_nonzero(above, axis=1, keepdims=True)
    return above | (equal & (np.cumsum(equal, axis=1) <= room))


def _cosine_from_sums(aa: float, bb: float, ab: float) -> float:
    if aa == 0.0 and bb == 0.0:
        return 1.0
    if aa == 0.0 or bb == 0.0:
        return 0.0
    return ab / (math.sqrt(aa) * math.sqrt(bb))


def _euclid_from_sums(aa: float, bb: float, ab: float, dd: float) -> float:
    diff = math.sqrt(max(dd, 0.0))
    mean = math.sqrt(max(aa + 2.0 * ab + bb, 0.0)) / 2.0
    if diff == 0.0:
        return 1.0
    if mean == 0.0:
        return 0.0
    return 1.0 - diff / mean


def _sqnr_from_sums(signal: float, noise: float) -> float:
    if noise == 0.0:
        return SQNR_CAP_DB
    if signal == 0.0:
        return -SQNR_CAP_DB
    return max(-SQNR_CAP_DB, min(SQNR_CAP_DB, 10.0 * math.log10(signal / noise)))


# --- streaming -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    """Rows and features of the squeezed shape: the class axis and the identical-rows check."""

    size: int
    rows: int
    features: int
    matrix: bool  # two or more axes longer than 1

    @classmethod
    def of(cls, shape: tuple[int, ...]) -> _Layout:
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


class _Distinct:
    """Distinct values seen, counted up to a cap (no sort of the whole tensor)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.values: list[Any] = []

    def add(self, chunk: np.ndarray) -> None:
        if len(self.values) >= self.cap:
            return
        rest = chunk[np.isin(chunk, self.values, invert=True)] if self.values else chunk
        while rest.size and len(self.values) < self.cap:
            self.values.append(rest[0])
            rest = rest[rest != rest[0]]

    @property
    def count(self) -> int:
        return len(self.values)


class _Moments:
    """What the detectors and metrics need of one tensor, accumulated chunk by chunk."""

    def __init__(self, layout: _Layout, distinct_cap: int) -> None:
        self.count = 0
        self.total = 0.0
        self.squares = 0.0
        self.low = math.inf
        self.high = -math.inf
        self.nonfinite = 0
        self.first_row: np.ndarray | None = None
        self.distinct = _Distinct(distinct_cap)
        width = layout.features if layout.row_check else 0
        self.col_total = np.zeros(width)
        self.col_squares = np.zeros(width)

    def add(self, values: np.ndarray, raw: np.ndarray, layout: _Layout) -> tuple[float, float]:
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


class _TopK:
    """Top-k agreement along the class axis, streamed; switches itself off (auto mode) as soon as
    the reference is seen not to be a probability distribution per row."""

    def __init__(self, layout: _Layout, k: int, asked: bool, ref_step: float) -> None:
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
        self.best: tuple[_Best, _Best] = (_Best(self.k), _Best(self.k))

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
            self.agreed += float(np.count_nonzero(_top_k_mask(ra, self.k) & _top_k_mask(rb, self.k))) / self.k
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
            self.best = (_Best(self.k), _Best(self.k))

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


class _Best:
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
            picked = np.flatnonzero(_top_k_mask(piece[None], self.k)[0])
        value = np.concatenate([self.value, piece[picked]])
        index = np.concatenate([self.index, picked + offset])
        keep = np.lexsort((index, -value))[: self.k]
        self.value, self.index = value[keep], index[keep]


@dataclass
class _PairSums:
    ab: float = 0.0
    dd: float = 0.0
    max_abs: float = 0.0


class _Buffers:
    """Reused float64 chunk buffers: no float64 copy of a whole tensor is ever made."""

    def __init__(self, size: int) -> None:
        self.a = np.empty(size)
        self.b = np.empty(size)
        self.d = np.empty(size)


def _dequantize_into(raw: np.ndarray, quant: QuantParams, buffer: np.ndarray) -> np.ndarray:
    values = buffer[: raw.size]
    np.copyto(values, raw, casting="unsafe")
    scale, zero = quant
    if scale and raw.dtype.kind in "iu":
        values -= float(zero)
        values *= scale
    return values


@dataclass
class _Stream:
    """One pass over the output (and the reference when given): everything the verdict needs."""

    out: _Moments
    ref: _Moments | None
    pair: _PairSums
    top_k: _TopK | None


def _stream(out: Tensor, ref: Tensor | None, layout: _Layout, top_k: _TopK | None) -> _Stream:
    result = _Stream(
        _Moments(layout, FEW_DISTINCT_OUT + 1),
        None if ref is None else _Moments(layout, FEW_DISTINCT_REF),
        _PairSums(),
        top_k,
    )
    buffers = _Buffers(layout.largest_chunk)
    for start, stop in layout.chunks():
        raw_b = out.read(start, stop - start)
        b = _dequantize_into(raw_b, out.quant, buffers.b)
        result.out.add(b, raw_b, layout)
        if ref is None or result.ref is None:
            continue
        raw_a = ref.read(start, stop - start)
        a = _dequantize_into(raw_a, ref.quant, buffers.a)
        low, high = result.ref.add(a, raw_a, layout)
        d = np.subtract(a, b, out=buffers.d[: a.size])
        result.pair.ab += float(np.einsum("i,i->", a, b))
        result.pair.dd += float(np.einsum("i,i->", d, d))
        result.pair.max_abs = max(result.pair.max_abs, float(np.max(d)), -float(np.min(d)))
        if top_k is not None:
            top_k.add(a, b, start, low, high)
    return result


# --- the degenerate-output detector ----------------------------------------------------------------


def detect_degenerate(
    out: Any,
    ref: Any = None,
    out_quant: QuantParams | None = None,
    ref_quant: QuantParams | None = None,
) -> Degeneracy | None:
    """The degenerate-output detector: a Degeneracy when the dequantized output is degenerate.

    `out` and `ref` are arrays or Tensors. With a reference (same number of values, all finite),
    a pattern only counts when the reference does not show it too (a CPU output may legitimately
    be all zeros); without one, the output alone is judged.
    """
    out_t = _as_tensor(out, out_quant)
    ref_t = None if ref is None else _as_tensor(ref, ref_quant)
    if ref_t is not None and ref_t.size != out_t.size:
        ref_t = None
    layout = _Layout.of(out_t.shape)
    return _judge_degenerate(_stream(out_t, ref_t, layout, None), layout)


def degenerate_reason(out: np.ndarray, ref: np.ndarray | None = None) -> str | None:
    """One sentence if the (dequantized) output is degenerate, else None."""
    found = detect_degenerate(out, ref)
    return None if found is None else found.reason


def degenerate(out: np.ndarray, scale: float = 0.0, zero_point: int = 0) -> str | None:
    """The degenerate-output detector on one raw output tensor with its quantization."""
    found = detect_degenerate(out, out_quant=(scale, zero_point))
    return None if found is None else found.reason


def _judge_degenerate(stream: _Stream, layout: _Layout) -> Degeneracy | None:
    out, ref = stream.out, stream.ref
    if out.count == 0:
        return Degeneracy("empty", "the output tensor is empty")
    if not out.finite:
        return Degeneracy("non-finite", f"{out.nonfinite} of {out.count} output values are NaN or Inf")
    ref_ok = ref is not None and ref.finite
    if out.low == 0.0 == out.high and not (ref_ok and ref.low == 0.0 == ref.high):
        return Degeneracy("all-zero", f"all {out.count} output values are zero")
    magnitude = max(1.0, abs(out.low), abs(out.high))
    ref_spread = ref.spread if ref_ok else None
    if (
        out.count > 1
        and out.spread <= CONSTANT_RTOL * magnitude
        and (ref_spread is None or ref_spread > out.spread)
    ):
        first = float(out.first_row[0]) if out.first_row is not None else 0.0
        tail = " while the reference varies" if ref_spread else ""
        return Degeneracy(
            "constant", f"all {out.count} output values are one repeated constant ({first:.4g}){tail}"
        )
    if ref_ok and ref_spread and out.count > 1 and out.std < COLLAPSE_RATIO * ref.std:
        return Degeneracy(
            "near-constant",
            f"the output is near-constant (std {out.std:.3g} against the reference's {ref.std:.3g})",
        )
    rows = _identical_rows(out, ref if ref_ok else None, layout, magnitude)
    if rows is not None:
        return rows
    if ref_ok and out.distinct.count <= FEW_DISTINCT_OUT and ref.distinct.count >= FEW_DISTINCT_REF:
        return Degeneracy(
            "few-distinct",
            f"the output has only {out.distinct.count} distinct value(s) where the reference has "
            f"{ref.distinct.count} or more",
        )
    return None


def _identical_rows(
    out: _Moments, ref: _Moments | None, layout: _Layout, magnitude: float
) -> Degeneracy | None:
    if not layout.row_check:
        return None
    out_spread = out.row_spread(layout.rows)
    if ref is not None:
        ref_spread = ref.row_spread(layout.rows)
        collapsed = ref_spread > 0 and out_spread < COLLAPSE_RATIO * ref_spread
    else:
        collapsed = out_spread <= CONSTANT_RTOL * magnitude
    if not collapsed:
        return None
    row = out.first_row if out.first_row is not None else np.empty(0)
    shown = ", ".join(f"{v:.3g}" for v in row)
    more = ", …" if layout.features > row.size else ""
    tail = " while the reference rows differ" if ref is not None else ""
    return Degeneracy(
        "identical-rows", f"all {layout.rows} rows of the output are the same [{shown}{more}]{tail}"
    )


# --- the verdict ---------------------------------------------------------------------------------------


def compare(
    ref: Any,
    out: Any,
    thresholds: Mapping[str, Any] | None = None,
    ref_quant: QuantParams | None = None,
    out_quant: QuantParams | None = None,
) -> Verdict:
    """Dequantize both tensors (arrays or Tensors), run the degenerate detector, compute the
    metrics, judge them. `thresholds` are the model's own (a profile's); naming `top_k` or
    `top_k_agree` there asks for top-k agreement along the last axis whatever the tensor holds.

    Raises ValueError (one sentence) when the shapes differ.
    """
    limits = thresholds_from_profile(thresholds)
    ref_t, out_t = _as_tensor(ref, ref_quant), _as_tensor(out, out_quant)
    _check_shapes(ref_t.shape, out_t.shape)
    layout = _Layout.of(out_t.shape)
    asked = any(key in (thresholds or {}) for key in TOP_K_KEYS)
    ref_step = ref_t.quant[0] if ref_t.dtype.kind in "iu" else 0.0
    top_k = _TopK(layout, int(limits["top_k"]), asked, abs(ref_step))
    stream = _stream(out_t, ref_t, layout, top_k)
    problem = _judge_degenerate(stream, layout)
    agreement, rule = top_k.result()
    if agreement is None and not asked:
        del limits["top_k_agree"]
    finite = stream.out.finite and stream.ref is not None and stream.ref.finite
    metrics = _metrics(stream, agreement) if finite else dict.fromkeys(_METRIC_KEYS)
    if problem is not None:
        return Verdict(
            False,
            f"the output is degenerate: {problem.reason}.",
            metrics,
            problem.reason,
            limits,
            problem.pattern,
            rule,
        )
    if not finite:
        return Verdict(
            False,
            "the reference contains NaN or Inf values; regenerate it.",
            metrics,
            None,
            limits,
            None,
            rule,
        )
    failures = _failures(metrics, limits, top_k.k)
    if failures:
        return Verdict(False, failures[0], metrics, None, limits, None, rule)
    sentence = (
        f"the output matches (cosine {metrics['cosine']:.4f}, euclid {metrics['euclid']:.4f}, "
        f"SQNR {metrics['sqnr_db']:.1f} dB)."
    )
    return Verdict(True, sentence, metrics, None, limits, None, rule)


_METRIC_KEYS = ("cosine", "euclid", "sqnr_db", "top_k_agree", "max_abs")


def _check_shapes(ref: tuple[int, ...], out: tuple[int, ...]) -> None:
    squeezed = [n for n in ref if n != 1], [n for n in out if n != 1]
    if math.prod(ref) != math.prod(out) or (ref != out and squeezed[0] != squeezed[1]):
        raise ValueError(
            f"the reference has shape {list(ref)} but the output has {list(out)}; "
            "compare outputs of the same model"
        )


def _metrics(stream: _Stream, agreement: float | None) -> dict[str, float | None]:
    assert stream.ref is not None
    aa, bb = stream.ref.squares, stream.out.squares
    ab, dd = stream.pair.ab, stream.pair.dd
    return {
        "cosine": round(_cosine_from_sums(aa, bb, ab), 6),
        "euclid": round(_euclid_from_sums(aa, bb, ab, dd), 6),
        "sqnr_db": round(_sqnr_from_sums(aa, dd), 3),
        "top_k_agree": None if agreement is None else round(agreement, 4),
        "max_abs": stream.pair.max_abs,
    }


def _failures(metrics: Mapping[str, float | None], limits: Mapping[str, float], k: int) -> list[str]:
    found = []
    checks = (
        ("cosine", "cosine similarity", "{:.4f}"),
        ("euclid", "euclidean similarity", "{:.4f}"),
        ("sqnr_db", "SQNR", "{:.1f} dB"),
        ("top_k_agree", f"top-{k} agreement", "{:.2f}"),
    )
    for key, label, fmt in checks:
        value = metrics.get(key)
        if key in limits and value is not None and value < limits[key]:
            found.append(
                f"{label} {fmt.format(value)} is below the threshold {fmt.format(limits[key])} "
                "after dequantization."
            )
    max_abs = metrics.get("max_abs")
    if "max_abs" in limits and max_abs is not None and max_abs > limits["max_abs"]:
        found.append(f"max abs error {max_abs:.4g} exceeds the threshold {limits['max_abs']:.4g}.")
    return found
