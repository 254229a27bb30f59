# SPDX-License-Identifier: MIT
"""Check 6 — SRAM / memory pools.  Each family registers its own function for ("memory", family)
in its package (npu_accept.families: the Neutron pool, RKNPU SRAM, CV18xx ION carveout, Rocket's
nothing to check); a board without an NPU has no NPU memory to check."""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, skipped
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "memory"


def check_no_memory(facts: BoardFacts, profile: Profile) -> CheckResult:
    return skipped(CHECK, f"Profile {profile.name} has no NPU memory to check.")


IMPLEMENTS = {(CHECK, "none"): check_no_memory}
