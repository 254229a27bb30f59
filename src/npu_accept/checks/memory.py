# SPDX-License-Identifier: MIT
"""Check 6 — SRAM / memory pools.  Neutron (i.MX95): the reserved-memory pool the driver allocates
from is present in the device tree and at least the profile's size.  Other families register
their own function for ("memory", family) (RKNPU SRAM, CV18xx ION carveout)."""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "memory"


def check_neutron_pool(facts: BoardFacts, profile: Profile) -> CheckResult:
    minimum = int((profile.memory.get("pool_min_bytes") if profile.memory else None) or 0)
    if not profile.memory:
        return skipped(CHECK, f"Profile {profile.name} says memory: null (no Neutron pool to check).")
    if facts.info is None:
        return failed(CHECK, f"npu-info could not run on the board: {facts.info_error}", "tools")
    pools = [p for p in (facts.info_section("memory").get("pools") or []) if isinstance(p, dict)]
    neutron = [p for p in pools if "neutron" in str(p.get("name", "")).lower()]
    if not neutron:
        names = ", ".join(str(p.get("name")) for p in pools) or "none"
        return failed(
            CHECK,
            "The Neutron reserved-memory pool is missing from the device tree "
            f"(reserved-memory pools found: {names}); apply meta-npu's Neutron DMA pool overlay.",
            "pool-missing",
        )
    pool = max(neutron, key=lambda p: int(p.get("size") or 0))
    size = int(pool.get("size") or 0)
    if size < minimum:
        return failed(
            CHECK,
            f"The Neutron pool {pool.get('name')} is {size} bytes, smaller than the "
            f"profile minimum {minimum}; enlarge the reserved-memory node.",
            "pool-small",
            size=size,
        )
    return passed(
        CHECK,
        f"The Neutron pool {pool.get('name')} has {size // (1 << 20)} MiB "
        f"(at least {minimum // (1 << 20)} MiB), from {pool.get('source')}.",
        size=size,
    )


def check_no_memory(facts: BoardFacts, profile: Profile) -> CheckResult:
    return skipped(CHECK, f"Profile {profile.name} has no NPU memory to check.")


IMPLEMENTS = {(CHECK, "neutron"): check_neutron_pool, (CHECK, "none"): check_no_memory}
