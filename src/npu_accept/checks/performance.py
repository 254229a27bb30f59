# SPDX-License-Identifier: MIT
"""Check 7 — performance: p50/p99 latency over N runs after warm-up, NPU/CPU speedup at least the
profile minimum, and with a baseline (written by an earlier run into --artifacts) no regression
beyond the profile's tolerance.  Speedup and regression compare the profile's statistic: p50 by
default, or the fastest run ("min") where a shared host makes p50 noisy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.facts import BoardFacts, ModelFacts
from npu_accept.profile import Profile

CHECK = "performance"


@dataclass(frozen=True)
class Latency:
    p50: float
    p99: float
    min: float
    runs: int

    def stat(self, name: str) -> float:
        return self.min if name == "min" else self.p50


def latency(samples: list[float]) -> Latency | None:
    """p50/p99/min in ms of the measured runs (warm-up runs are not in npu-run's latency_ms)."""
    if not samples:
        return None
    values = np.asarray(samples, dtype=np.float64)
    return Latency(
        float(np.percentile(values, 50)), float(np.percentile(values, 99)), float(values.min()), len(samples)
    )


def model_latencies(model: ModelFacts) -> tuple[Latency | None, Latency | None]:
    """(accelerated, CPU reference) latencies of one model."""
    npu = latency(model.npu.latencies_ms) if model.npu and model.npu.ok else None
    cpu = latency(model.cpu.latencies_ms) if model.cpu and model.cpu.ok else None
    return npu, cpu


def check_performance(facts: BoardFacts, profile: Profile) -> CheckResult:
    perf = profile.performance
    stat = perf.statistic
    said: list[str] = []
    for model in facts.models:
        name = model.spec.name
        npu, cpu = model_latencies(model)
        if npu is None:
            return skipped(
                CHECK,
                f"Model {name} has no successful accelerated run to time "
                "(the delegate check names the cause).",
            )
        timing = f"{name} p50 {npu.p50:.3f} ms / p99 {npu.p99:.3f} ms"
        if profile.has_npu and model.cpu is None:
            said.append(f"{timing} (no CPU reference model, so no speedup)")
        elif profile.has_npu:
            if cpu is None:
                return failed(
                    CHECK,
                    f"The CPU reference run of model {name} failed "
                    f"({model.cpu.first_error() if model.cpu else 'not run'}), so no speedup can be "
                    "measured; check the reference model path in the profile.",
                    "cpu-reference",
                )
            speedup = cpu.stat(stat) / npu.stat(stat) if npu.stat(stat) > 0 else float("inf")
            if speedup < perf.min_speedup:
                return failed(
                    CHECK,
                    f"Model {name} runs {speedup:.2f}x as fast on the NPU as on the CPU "
                    f"({stat} {npu.stat(stat):.3f} ms vs {cpu.stat(stat):.3f} ms), below the profile "
                    f"minimum {perf.min_speedup:g}x: the NPU is not accelerating it.",
                    "slow",
                    speedup=speedup,
                )
            said.append(f"{timing}, {speedup:.2f}x the CPU ({stat})")
        else:
            said.append(f"{timing} on the CPU")
        if facts.baseline is not None:
            before = (facts.baseline.get("models") or {}).get(name) or {}
            key = "min_ms" if stat == "min" else "p50_ms"
            if not before.get(key):
                return failed(
                    CHECK,
                    f"The baseline has no {stat} latency of model {name}; record a new "
                    "baseline with this profile (baseline.json in --artifacts).",
                    "baseline",
                )
            reference = float(before[key])
            limit = reference * (1 + perf.regression_tolerance)
            if npu.stat(stat) > limit:
                return failed(
                    CHECK,
                    f"Model {name} regressed: {stat} {npu.stat(stat):.3f} ms against the "
                    f"baseline's {reference:.3f} ms, beyond the {perf.regression_tolerance:.0%} "
                    "tolerance; find the change that slowed it.",
                    "regression",
                    latency=npu.stat(stat),
                    baseline=reference,
                )
            said[-1] += f", within {perf.regression_tolerance:.0%} of the baseline's {reference:.3f} ms"
    if not said:
        return skipped(CHECK, f"Profile {profile.name} lists no model to time.")
    return passed(CHECK, "; ".join(said) + ".")


IMPLEMENTS = {(CHECK, "*"): check_performance}
