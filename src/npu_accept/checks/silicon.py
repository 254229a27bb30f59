# SPDX-License-Identifier: MIT
"""Check 2 — silicon: the SoC is the one the profile names, in a revision the NPU stack supports.

i.MX95: /sys/devices/soc0/revision "1.0" (A0) and "1.1" (A1) fail — NXP and Toradex support
NPU acceleration on B0 silicon ("2.0") only; other families match soc_id/compatible/chip id.
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "silicon"


def check_silicon(facts: BoardFacts, profile: Profile) -> CheckResult:
    spec = profile.soc
    if not (spec.soc_id or spec.compatible or spec.chip_id or spec.revisions_ok or spec.revisions_bad):
        return skipped(CHECK, f"Profile {profile.name} names no SoC to check.")
    if facts.info is None:
        return failed(CHECK, f"npu-info could not run on the board: {facts.info_error}", "tools")
    soc = facts.info_section("soc")
    soc_id = soc.get("soc_id")
    if spec.soc_id and soc_id != spec.soc_id:
        return failed(
            CHECK,
            f"The SoC is {soc_id or 'unknown'} (from /sys/devices/soc0/soc_id) but profile "
            f"{profile.name} is for {spec.soc_id}; use the profile of this board.",
            "soc-mismatch",
        )
    if spec.compatible:
        found = set(soc.get("compatible") or [])
        if not found & set(spec.compatible):
            return failed(
                CHECK,
                f"The device tree compatible {sorted(found) or 'is empty and'} matches none "
                f"of {list(spec.compatible)} of profile {profile.name}; use the profile of this board.",
                "soc-mismatch",
            )
    if spec.chip_id and str(soc.get("chip_id")) != spec.chip_id:
        return failed(
            CHECK,
            f"The chip id is {soc.get('chip_id')} but profile {profile.name} expects "
            f"{spec.chip_id}; use the profile of this board.",
            "soc-mismatch",
        )
    revision = soc.get("revision")
    name = soc_id or spec.soc_id or "the SoC"
    if spec.revisions_bad or spec.revisions_ok:
        if revision is None:
            return failed(
                CHECK,
                f"The silicon revision of {name} could not be read from "
                "/sys/devices/soc0/revision; the kernel's SoC driver must expose it.",
                "silicon-unknown",
            )
        if revision in spec.revisions_bad:
            label = f"{name} {spec.revisions_bad[revision]} (revision {revision})"
            reason = spec.bad_reason or f"the NPU stack supports revision {', '.join(spec.revisions_ok)} only"
            return failed(
                CHECK,
                f"The SoC is {label}: {reason} — this board cannot pass; use a board with "
                f"revision {' or '.join(spec.revisions_ok) or 'a supported one'}.",
                "silicon-bad-revision",
                soc_label=label,
                reason=reason,
                revision=revision,
            )
        if spec.revisions_ok and revision not in spec.revisions_ok:
            return failed(
                CHECK,
                f"The silicon revision {revision} of {name} is not one profile {profile.name} "
                f"knows ({', '.join(spec.revisions_ok)}); add it to the profile once it is confirmed "
                "supported.",
                "silicon-unknown",
                revision=revision,
            )
    return passed(
        CHECK,
        f"The SoC is {name}"
        + (f" revision {revision}" if revision else "")
        + f", as profile {profile.name} expects.",
        revision=revision,
    )


IMPLEMENTS = {(CHECK, "*"): check_silicon}
