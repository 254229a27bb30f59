# SPDX-License-Identifier: MIT
"""Check 7 for the RKNPU family: the family-independent performance verdict, plus the latency
measured again with the NPU and CPU frequency governors pinned to "performance" (RKNN SDK v2.3.2
user guide 8.1.1) — reported, and a failure if any governor was not put back as it was.

The runtime's RKNN_LOG_LEVEL=4 log of each model is kept in the artifacts too (checks/rknn_logs.py)."""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed
from npu_accept.checks.performance import CHECK, check_performance, latency
from npu_accept.collectors.governors import FACT_KEY, collect_pinned_performance
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
    if not said:
        return base
    extra = (
        f"; with {pinned} NPU/CPU frequency governor(s) pinned to performance and restored after: "
        if pinned
        else "; the board exposes no frequency governor to pin, so again unpinned: "
    ) + ", ".join(said)
    return CheckResult(
        base.check, base.status, base.message.rstrip(".") + extra + ".", base.cause, base.details
    )


IMPLEMENTS = {(CHECK, "rknpu"): check_rknpu_performance}
COLLECTORS = {"rknpu": collect_pinned_performance}
