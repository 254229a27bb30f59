# SPDX-License-Identifier: MIT
"""The rocket family's checks: check 6 — the mainline Rocket driver has no SRAM support and no
reserved pool, so there is nothing to check."""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, skipped
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "memory"


def check_rocket_memory(facts: BoardFacts, profile: Profile) -> CheckResult:
    return skipped(CHECK, f"Profile {profile.name}: the Rocket driver uses no SRAM or reserved pool.")


IMPLEMENTS = {(CHECK, "rocket"): check_rocket_memory}
