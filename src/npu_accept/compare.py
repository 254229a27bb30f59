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
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npu_accept.tensorstream import (
    Layout,
    Moments,
    QuantParams,
    Stream,
    Tensor,
    TopK,
    as_tensor,
    stream,
    top_k_mask,
)

__all__ = ["Degeneracy", "QuantParams", "Tensor", "Verdict", "compare", "detect_degenerate"]

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
FEW_DISTINCT_OUT = 3
FEW_DISTINCT_REF = 16
DISTINCT_CAPS = (FEW_DISTINCT_OUT + 1, FEW_DISTINCT_REF)


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
    return float(np.count_nonzero(top_k_mask(a[None], k) & top_k_mask(b[None], k))) / k


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
    out_t = as_tensor(out, out_quant)
    ref_t = None if ref is None else as_tensor(ref, ref_quant)
    if ref_t is not None and ref_t.size != out_t.size:
        ref_t = None
    layout = Layout.of(out_t.shape)
    return _judge_degenerate(stream(out_t, ref_t, layout, None, DISTINCT_CAPS), layout)


def degenerate_reason(out: np.ndarray, ref: np.ndarray | None = None) -> str | None:
    """One sentence if the (dequantized) output is degenerate, else None."""
    found = detect_degenerate(out, ref)
    return None if found is None else found.reason


def degenerate(out: np.ndarray, scale: float = 0.0, zero_point: int = 0) -> str | None:
    """The degenerate-output detector on one raw output tensor with its quantization."""
    found = detect_degenerate(out, out_quant=(scale, zero_point))
    return None if found is None else found.reason


def _judge_degenerate(seen: Stream, layout: Layout) -> Degeneracy | None:
    out, ref = seen.out, seen.ref
    if out.count == 0:
        return Degeneracy("empty", "the output tensor is empty")
    if not out.finite:
        return Degeneracy("non-finite", f"{out.nonfinite} of {out.count} output values are NaN or Inf")
    good = ref if ref is not None and ref.finite else None  # a reference to judge against
    if out.low == 0.0 == out.high and not (good is not None and good.low == 0.0 == good.high):
        return Degeneracy("all-zero", f"all {out.count} output values are zero")
    magnitude = max(1.0, abs(out.low), abs(out.high))
    ref_spread = good.spread if good is not None else None
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
    if good is not None and ref_spread and out.count > 1 and out.std < COLLAPSE_RATIO * good.std:
        return Degeneracy(
            "near-constant",
            f"the output is near-constant (std {out.std:.3g} against the reference's {good.std:.3g})",
        )
    rows = _identical_rows(out, good, layout, magnitude)
    if rows is not None:
        return rows
    if (
        good is not None
        and out.distinct.count <= FEW_DISTINCT_OUT
        and good.distinct.count >= FEW_DISTINCT_REF
    ):
        return Degeneracy(
            "few-distinct",
            f"the output has only {out.distinct.count} distinct value(s) where the reference has "
            f"{good.distinct.count} or more",
        )
    return None


def _identical_rows(out: Moments, ref: Moments | None, layout: Layout, magnitude: float) -> Degeneracy | None:
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
    ref_t, out_t = as_tensor(ref, ref_quant), as_tensor(out, out_quant)
    _check_shapes(ref_t.shape, out_t.shape)
    layout = Layout.of(out_t.shape)
    asked = any(key in (thresholds or {}) for key in TOP_K_KEYS)
    ref_step = ref_t.quant[0] if ref_t.dtype.kind in "iu" else 0.0
    top_k = TopK(layout, int(limits["top_k"]), asked, abs(ref_step))
    seen = stream(out_t, ref_t, layout, top_k, DISTINCT_CAPS)
    problem = _judge_degenerate(seen, layout)
    agreement, rule = top_k.result()
    if agreement is None and not asked:
        del limits["top_k_agree"]
    finite = seen.out.finite and seen.ref is not None and seen.ref.finite
    metrics = _metrics(seen, agreement) if finite else dict.fromkeys(_METRIC_KEYS)
    if problem is not None:
        sentence = f"the output is degenerate: {problem.reason}."
        return Verdict(False, sentence, metrics, problem.reason, limits, problem.pattern, rule)
    if not finite:
        sentence = "the reference contains NaN or Inf values; regenerate it."
        return Verdict(False, sentence, metrics, None, limits, None, rule)
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


def _metrics(seen: Stream, agreement: float | None) -> dict[str, float | None]:
    assert seen.ref is not None
    aa, bb = seen.ref.squares, seen.out.squares
    ab, dd = seen.pair.ab, seen.pair.dd
    return {
        "cosine": round(_cosine_from_sums(aa, bb, ab), 6),
        "euclid": round(_euclid_from_sums(aa, bb, ab, dd), 6),
        "sqnr_db": round(_sqnr_from_sums(aa, dd), 3),
        "top_k_agree": None if agreement is None else round(agreement, 4),
        "max_abs": seen.pair.max_abs,
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
