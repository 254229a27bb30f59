# SPDX-License-Identifier: MIT
"""Compare an NPU output tensor with a reference after dequantization, and detect degenerate outputs.

Metrics (TPU-MLIR / RKNN practice, STACKS.md): cosine similarity, euclidean similarity
1 - ||a-b|| / ||(a+b)/2||, SQNR in dB, top-k agreement, max abs error. Cosine alone is blind to
scale and offset: a constant uint8 128 scores 0.9989 against a raw uint8 reference with zero
point 128, so integers are always dequantized first and a degenerate-output detector runs before
any metric (constant or near-constant tensors, rows identical across anchors, NaN/Inf, all zeros,
too few distinct values).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

QuantParams = tuple[float, int]

DEFAULT_THRESHOLDS: dict[str, float] = {
    "cosine": 0.99,
    "euclid": 0.90,
    "sqnr_db": 20.0,
    "top_k": 5,
    "top_k_agree": 0.8,
}
KNOWN_THRESHOLDS = ("cosine", "euclid", "sqnr_db", "top_k", "top_k_agree", "max_abs")
SQNR_CAP_DB = 200.0
# A tensor whose spread is below this fraction of the reference's spread has collapsed.
COLLAPSE_RATIO = 0.01
# Without a reference: spread below this (relative to the magnitude) is a constant.
CONSTANT_RTOL = 1e-6
MIN_ROWS_FOR_ROW_CHECK = 4
FEW_DISTINCT_OUT = 3
FEW_DISTINCT_REF = 16


@dataclass
class Verdict:
    """The outcome of one comparison: metrics, pass/fail and one sentence saying why."""

    passed: bool
    sentence: str
    metrics: dict[str, float | None] = field(default_factory=dict)
    degenerate: str | None = None
    thresholds: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "sentence": self.sentence,
            "metrics": self.metrics,
            "degenerate": self.degenerate,
            "thresholds": self.thresholds,
        }


def dequantize(array: np.ndarray, scale: float = 0.0, zero_point: int = 0) -> np.ndarray:
    """float64 values: integers with a non-zero scale become (q - zero_point) * scale."""
    values = np.asarray(array)
    if np.issubdtype(values.dtype, np.integer) and scale:
        return (values.astype(np.float64) - float(zero_point)) * float(scale)
    if values.dtype == np.bool_:
        return values.astype(np.float64)
    return values.astype(np.float64)


def thresholds_from_profile(raw: Mapping[str, Any] | None) -> dict[str, float]:
    """Profile thresholds merged over the defaults; ValueError naming an unknown key or bad value."""
    merged = dict(DEFAULT_THRESHOLDS)
    for key, value in (raw or {}).items():
        if key not in KNOWN_THRESHOLDS:
            raise ValueError(f"unknown threshold '{key}'; use one of {', '.join(KNOWN_THRESHOLDS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"threshold '{key}' must be a number, not {value!r}")
        merged[key] = float(value)
    return merged


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))


def euclid_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 - ||a-b|| / ||(a+b)/2|| (TPU-MLIR's definition); 1.0 for identical, 0.0 if undefined."""
    diff = float(np.linalg.norm(a - b))
    mean = float(np.linalg.norm((a + b) / 2.0))
    if diff == 0.0:
        return 1.0
    if mean == 0.0:
        return 0.0
    return 1.0 - diff / mean


def sqnr_db(ref: np.ndarray, out: np.ndarray) -> float:
    signal = float(np.sum(ref * ref))
    noise = float(np.sum((ref - out) ** 2))
    if noise == 0.0:
        return SQNR_CAP_DB
    if signal == 0.0:
        return -SQNR_CAP_DB
    return max(-SQNR_CAP_DB, min(SQNR_CAP_DB, 10.0 * math.log10(signal / noise)))


def top_k_agreement(ref: np.ndarray, out: np.ndarray, k: int) -> float:
    """Share of the reference's k largest entries that are also among the output's k largest."""
    k = max(1, min(int(k), ref.size))
    ref_top = set(np.argsort(-ref, kind="stable")[:k].tolist())
    out_top = set(np.argsort(-out, kind="stable")[:k].tolist())
    return len(ref_top & out_top) / k


def _rows(values: np.ndarray) -> np.ndarray | None:
    """The tensor as (anchors, features) when it has that shape after dropping size-1 axes."""
    squeezed = np.squeeze(values)
    if squeezed.ndim < 2:
        return None
    rows = squeezed.reshape(-1, squeezed.shape[-1])
    if rows.shape[0] < MIN_ROWS_FOR_ROW_CHECK or rows.shape[1] < 2:
        return None
    return rows


def _row_spread(rows: np.ndarray) -> float:
    return float(np.mean(np.std(rows, axis=0)))


def _fmt_row(row: np.ndarray) -> str:
    shown = ", ".join(f"{v:.3g}" for v in row[:6])
    return f"[{shown}{', …' if row.size > 6 else ''}]"


def degenerate_reason(out: np.ndarray, ref: np.ndarray | None = None) -> str | None:
    """One sentence if the (dequantized) output is degenerate, else None.

    With a reference, a pattern only counts when the reference does not show it too (a CPU output
    may legitimately be all zeros); without one, the output alone is judged.
    """
    values = np.asarray(out, dtype=np.float64)
    if values.size == 0:
        return "the output tensor is empty"
    bad = int(np.count_nonzero(~np.isfinite(values)))
    if bad:
        return f"{bad} of {values.size} output values are NaN or Inf"
    ref_values = None if ref is None else np.asarray(ref, dtype=np.float64)
    ref_ok = ref_values is not None and ref_values.size == values.size and np.all(np.isfinite(ref_values))
    if not np.any(values) and not (ref_ok and not np.any(ref_values)):
        return f"all {values.size} output values are zero"
    spread = float(np.ptp(values))
    magnitude = max(1.0, float(np.max(np.abs(values))))
    ref_spread = float(np.ptp(ref_values)) if ref_ok else None
    ref_varies = ref_spread is None or ref_spread > spread
    if values.size > 1 and spread <= CONSTANT_RTOL * magnitude and ref_varies:
        return f"all {values.size} output values are one repeated constant ({values.flat[0]:.4g})" + (
            " while the reference varies" if ref_spread else ""
        )
    if ref_ok and ref_spread and values.size > 1:
        if float(np.std(values)) < COLLAPSE_RATIO * float(np.std(ref_values)):
            return (
                f"the output is near-constant (std {np.std(values):.3g} against the reference's "
                f"{np.std(ref_values):.3g})"
            )
    rows = _rows(values)
    if rows is not None:
        ref_rows = _rows(ref_values.reshape(values.shape)) if ref_ok else None
        out_spread = _row_spread(rows)
        if ref_rows is not None:
            ref_row_spread = _row_spread(ref_rows)
            collapsed = ref_row_spread > 0 and out_spread < COLLAPSE_RATIO * ref_row_spread
        else:
            collapsed = out_spread <= CONSTANT_RTOL * magnitude
        if collapsed:
            return f"all {rows.shape[0]} rows of the output are the same {_fmt_row(rows[0])}" + (
                " while the reference rows differ" if ref_rows is not None else ""
            )
    if ref_ok:
        distinct_out = np.unique(values).size
        distinct_ref = np.unique(ref_values).size
        if distinct_out <= FEW_DISTINCT_OUT and distinct_ref >= FEW_DISTINCT_REF:
            return (
                f"the output has only {distinct_out} distinct value(s) where the reference has {distinct_ref}"
            )
    return None


def degenerate(out: np.ndarray, scale: float = 0.0, zero_point: int = 0) -> str | None:
    """The degenerate-output detector on one raw output tensor with its quantization."""
    return degenerate_reason(dequantize(out, scale, zero_point))


def _quant(quant: QuantParams | None) -> QuantParams:
    if quant is None:
        return 0.0, 0
    return float(quant[0] or 0.0), int(quant[1] or 0)


def compare(
    ref: np.ndarray,
    out: np.ndarray,
    thresholds: Mapping[str, Any] | None = None,
    ref_quant: QuantParams | None = None,
    out_quant: QuantParams | None = None,
) -> Verdict:
    """Dequantize both tensors, run the degenerate detector, compute the metrics, judge them.

    Raises ValueError (one sentence) when the shapes differ.
    """
    limits = thresholds_from_profile(thresholds)
    ref_raw, out_raw = np.asarray(ref), np.asarray(out)
    if ref_raw.size != out_raw.size or (
        ref_raw.shape != out_raw.shape and np.squeeze(ref_raw).shape != np.squeeze(out_raw).shape
    ):
        raise ValueError(
            f"the reference has shape {list(ref_raw.shape)} but the output has "
            f"{list(out_raw.shape)}; compare outputs of the same model"
        )
    a = dequantize(ref_raw, *_quant(ref_quant)).reshape(-1)
    b = dequantize(out_raw, *_quant(out_quant)).reshape(-1)
    problem = degenerate_reason(b.reshape(out_raw.shape), a.reshape(out_raw.shape))
    metrics: dict[str, float | None] = {
        key: None for key in ("cosine", "euclid", "sqnr_db", "top_k_agree", "max_abs")
    }
    finite = bool(np.all(np.isfinite(a)) and np.all(np.isfinite(b)))
    if finite:
        metrics.update(
            cosine=round(cosine(a, b), 6),
            euclid=round(euclid_similarity(a, b), 6),
            sqnr_db=round(sqnr_db(a, b), 3),
            top_k_agree=round(top_k_agreement(a, b, int(limits["top_k"])), 4),
            max_abs=float(np.max(np.abs(a - b))),
        )
    if problem is not None:
        return Verdict(False, f"the output is degenerate: {problem}.", metrics, problem, limits)
    if not finite:
        return Verdict(
            False, "the reference contains NaN or Inf values; regenerate it.", metrics, None, limits
        )
    failures = _failures(metrics, limits)
    if failures:
        return Verdict(False, failures[0], metrics, None, limits)
    sentence = (
        f"the output matches (cosine {metrics['cosine']:.4f}, euclid {metrics['euclid']:.4f}, "
        f"SQNR {metrics['sqnr_db']:.1f} dB)."
    )
    return Verdict(True, sentence, metrics, None, limits)


def _failures(metrics: Mapping[str, float | None], limits: Mapping[str, float]) -> list[str]:
    found = []
    checks = (
        ("cosine", "cosine similarity", "{:.4f}"),
        ("euclid", "euclidean similarity", "{:.4f}"),
        ("sqnr_db", "SQNR", "{:.1f} dB"),
        ("top_k_agree", f"top-{int(limits.get('top_k', 5))} agreement", "{:.2f}"),
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
