# SPDX-License-Identifier: MIT
"""Check 7 for the RKNPU family: the family-independent performance verdict, plus the latency
measured again with the NPU and CPU frequency governors pinned to "performance" (RKNN SDK v2.3.2
user guide 8.1.1) — reported, and a failure if any governor was not put back as it was.

The runtime's RKNN_LOG_LEVEL=4 log of each model is kept in the artifacts too (logs.py)."""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed
from npu_accept.checks.performance import CHECK, check_performance, latency
from npu_accept.collectors.governors import FACT_KEY, collect_pinned_performance
from npu_accept.collectors.rknn_modes import FACT_KEY as MODES_KEY
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile


def check_rknpu_performance(facts: BoardFacts, profile: Profile) -> CheckResult:
    base = check_performance(facts, profile)
    record = facts.extra.get(FACT_KEY)
    if not isinstance(record, dict):
        return base
    if record.get("restored") is False:
        paths = ", ".join(record.get("not_restored") or [])
        return failed(
            CHECK,
            f"The frequency governors {paths} were pinned for the measurement and not put back as they "
            "were; write the values of pinned-performance.json back.",
            "governors-left-changed",
        )
    said = []
    for name, run in (record.get("models") or {}).items():
        timing = latency(run.get("latency_ms") or [])
        said.append(f"{name} p50 {timing.p50:.3f} ms" if timing else f"{name} not timed ({run.get('error')})")
    pinned = len(record.get("pinned") or [])
    extra = ""
    if said:
        extra = (
            f"; with {pinned} NPU/CPU frequency governor(s) pinned to performance and restored after: "
            if pinned
            else f"; {record['not_pinned']}, so nothing was pinned: again unpinned: "
            if record.get("not_pinned")
            else "; the board exposes no frequency governor to pin, so again unpinned: "
        ) + ", ".join(said)
    cores = _multicore(facts)
    if cores:
        extra += "; multi-core: " + ", ".join(cores)
    if not extra:
        return base
    return CheckResult(
        base.check, base.status, base.message.rstrip(".") + extra + ".", base.cause, base.details
    )


IMPLEMENTS = {(CHECK, "rknpu"): check_rknpu_performance}
COLLECTORS = {"rknpu": collect_pinned_performance}


def _multicore(facts: BoardFacts) -> list[str]:
    """The core mask 0_1_2 against core 0, as measured by collectors.rknn_modes (reported)."""
    said = []
    for name, run in ((facts.extra.get(MODES_KEY) or {}).get("multicore") or {}).items():
        if run.get("error") or not run.get("speedup"):
            said.append(f"{name} not timed on 3 cores ({run.get('error')})")
        else:
            said.append(
                f"{name} on cores 0_1_2 {run['multi_p50_ms']:.3f} ms vs core 0 {run['single_p50_ms']:.3f} ms "
                f"({run['speedup']:.2f}x)"
            )
    return said
