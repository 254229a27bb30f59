# SPDX-License-Identifier: MIT
"""The result record every check returns, and small helpers shared by the checks."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from npu_accept.checks.roster import ROSTER

if TYPE_CHECKING:
    from npu_accept.facts import BoardFacts
    from npu_accept.profile import Profile

PASS, FAIL, SKIP = "pass", "fail", "skip"

# The checks in number order, and their headings: read from the roster (npu_accept.checks.roster).
CHECK_ORDER: tuple[str, ...] = tuple(check.id for check in ROSTER)
CHECK_TITLES: dict[str, str] = {check.id: check.heading for check in ROSTER}


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check on one board: status plus one sentence a user can act on."""

    check: str
    status: str
    message: str
    cause: str | None = None  # a short tag the session summary reasons with
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == PASS


def passed(check: str, message: str, **details: Any) -> CheckResult:
    return CheckResult(check, PASS, message, None, details)


def failed(check: str, message: str, cause: str, **details: Any) -> CheckResult:
    return CheckResult(check, FAIL, message, cause, details)


def skipped(check: str, message: str, **details: Any) -> CheckResult:
    return CheckResult(check, SKIP, message, None, details)


def memory_expected(facts: BoardFacts, profile: Profile, key: str, nothing: str) -> int | CheckResult:
    """Check 6's opening, the same for every family: the profile's memory.KEY, or the result that
    ends the check there: skipped where the profile says `memory: null` (NOTHING names what there
    is then not to check), failed where npu-info did not run on the board."""
    value = getattr(profile.memory, key, None) if profile.memory else None
    if value is None:
        return skipped("memory", f"Profile {profile.name} says memory: null (no {nothing} to check).")
    if facts.info is None:
        return failed("memory", f"npu-info could not run on the board: {facts.info_error}", "tools")
    return int(value)


def version_tuple(text: str) -> tuple[int, ...] | None:
    """'v0.9.8' / '1.0' / '2.3.2-abc' → (0, 9, 8); None when the text holds no version."""
    match = re.search(r"(\d+(?:\.\d+)*)", text or "")
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def version_at_least(found: str, minimum: str) -> bool | None:
    """True/False when both parse; None when either is not a version."""
    a, b = version_tuple(found), version_tuple(minimum)
    if a is None or b is None:
        return None
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)) >= b + (0,) * (width - len(b))


def same_version(a: str, b: str) -> bool:
    va, vb = version_tuple(a), version_tuple(b)
    if va is None or vb is None:
        return a.strip() == b.strip()
    width = max(len(va), len(vb))
    return va + (0,) * (width - len(va)) == vb + (0,) * (width - len(vb))
