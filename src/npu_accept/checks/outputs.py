# SPDX-License-Identifier: MIT
"""Check 5 — output correctness: the same input through the NPU (converted model, delegate) and
the CPU (reference model) on the board, compared after dequantization with the profile's
thresholds by `npu_accept.compare` (cosine, euclidean similarity, SQNR, top-k agreement, max abs
error, degenerate-output detector); also against golden references shipped with a model."""

from __future__ import annotations

from typing import Any

import numpy as np

from npu_accept import compare
from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.facts import BoardFacts, ModelFacts, RunFacts
from npu_accept.profile import Profile

CHECK = "outputs"


def _quant(run: RunFacts, index: int) -> tuple[float, int]:
    outputs = (run.report or {}).get("outputs") or []
    if index < len(outputs):
        return float(outputs[index].get("scale") or 0.0), int(outputs[index].get("zero_point") or 0)
    return 0.0, 0


def _row(model: str, output: str, against: str, verdict: Any) -> dict[str, Any]:
    metrics = dict(getattr(verdict, "metrics", {}) or {})

    def fmt(key: str) -> str:
        value = metrics.get(key)
        return "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)

    return {
        "model": model,
        "output": output,
        "against": against,
        "cosine": fmt("cosine"),
        "euclid": fmt("euclid"),
        "sqnr_db": fmt("sqnr_db"),
        "top_k_agree": fmt("top_k_agree"),
        "max_abs": fmt("max_abs"),
        "verdict": "match" if verdict.passed else verdict.sentence,
    }


def check_outputs(facts: BoardFacts, profile: Profile) -> CheckResult:
    rows: list[dict[str, Any]] = []
    said: list[str] = []
    for model in facts.models:
        outcome = _judge_model(model, profile, rows)
        if isinstance(outcome, CheckResult):
            return CheckResult(
                outcome.check,
                outcome.status,
                outcome.message,
                outcome.cause,
                {**outcome.details, "comparisons": rows},
            )
        said.append(outcome)
    if not said:
        return skipped(CHECK, f"Profile {profile.name} lists no model to compare.", comparisons=rows)
    return passed(CHECK, "; ".join(said) + ".", comparisons=rows)


def _judge_model(model: ModelFacts, profile: Profile, rows: list[dict[str, Any]]) -> CheckResult | str:
    name = model.spec.name
    npu = model.npu
    label = "NPU" if profile.has_npu else "CPU"
    if (npu is None or not npu.ok) and not profile.has_npu:
        # Without an NPU no other check looks at the run: its failure is this check's.
        return failed(
            CHECK,
            f"Model {name} did not run on the CPU ({npu.first_error() if npu else 'not run'}); "
            "check the model path in the profile and the TFLite bindings on the board.",
            "cpu-run",
        )
    if npu is None or not npu.ok:
        return skipped(
            CHECK,
            f"Model {name} did not run through the {label} "
            f"({npu.first_error() if npu else 'not run'}), so there are no outputs to compare "
            "(the delegate check names the cause).",
        )
    references: list[tuple[str, list[np.ndarray], RunFacts | None]] = []
    if profile.has_npu and model.cpu is not None:
        cpu = model.cpu
        if not cpu.ok:
            return failed(
                CHECK,
                f"The CPU reference run of model {name} failed "
                f"({cpu.first_error()}); check the reference model path in "
                "the profile.",
                "cpu-reference",
            )
        references.append(("CPU", cpu.outputs, cpu))
    if model.golden:
        references.append(("golden", model.golden, None))
    thresholds = dict(model.spec.thresholds)
    first_failure: CheckResult | None = None
    for against, arrays, ref_run in references:
        if len(arrays) != len(npu.outputs):
            return failed(
                CHECK,
                f"Model {name} gives {len(npu.outputs)} output(s) on the {label} but the "
                f"{against} reference has {len(arrays)}; the two models do not match.",
                "shape",
            )
        for index, (ref, out) in enumerate(zip(arrays, npu.outputs, strict=True)):
            ref_scale, ref_zero = _quant(ref_run, index) if ref_run else (0.0, 0)
            out_scale, out_zero = _quant(npu, index)
            verdict = compare.compare(
                ref,
                out,
                thresholds=thresholds,
                ref_quant=(ref_scale, ref_zero),
                out_quant=(out_scale, out_zero),
            )
            rows.append(_row(name, f"out{index}", against, verdict))
            if not verdict.passed and first_failure is None:
                # Every output is still compared, so the report's table shows all of them.
                cause = "degenerate" if verdict.degenerate else "mismatch"
                first_failure = failed(
                    CHECK,
                    f"Output {index} of model {name} on the {label} does not match the "
                    f"{against} reference: {verdict.sentence.rstrip('.')}.",
                    cause,
                )
    if first_failure is not None:
        return first_failure
    if not references:
        for index, out in enumerate(npu.outputs):
            problem = compare.degenerate(out, *_quant(npu, index))
            rows.append(
                {
                    "model": name,
                    "output": f"out{index}",
                    "against": "itself",
                    "cosine": "-",
                    "euclid": "-",
                    "sqnr_db": "-",
                    "top_k_agree": "-",
                    "max_abs": "-",
                    "verdict": problem or "not degenerate",
                }
            )
            if problem:
                return failed(
                    CHECK,
                    f"Output {index} of model {name} is degenerate: {problem.rstrip('.')}.",
                    "degenerate",
                )
        return f"{name}: outputs not degenerate (no reference to compare against)"
    return (
        f"{name}: {len(npu.outputs)} output(s) match the "
        + " and ".join(a for a, _, _ in references)
        + " reference"
    )


IMPLEMENTS = {(CHECK, "*"): check_outputs}
