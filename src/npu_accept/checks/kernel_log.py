# SPDX-License-Identifier: MIT
"""Check 8 — kernel log: no NPU fault in the kernel log, neither since boot nor during the run.

The fault wordings per NPU family are npu-diagnose's (`npu_accept.diagnose.kernel_faults`): SMMU /
IOMMU faults, remoteproc crashes and start failures, firmware load failures, RKNPU job timeouts,
cvi-tpu timeouts.  Lines logged after npu-info ran (its `kernel_log` marker: line count and printk
time) happened during the model runs.  The profile's `kernel_log.allow` lists regular expressions
of lines known to be harmless on the board.
"""

from __future__ import annotations

from typing import Any

from npu_accept.checks.base import CheckResult, failed, passed, skipped
from npu_accept.collectors.kernel_log import FACT_KEY, collect_kernel_log
from npu_accept.diagnose.kernel_faults import KernelFault, compile_allowlist, scan
from npu_accept.diagnose.sources import quote
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "kernel_log"


def during_run(faults: list[KernelFault], marker: dict[str, Any] | None) -> list[KernelFault]:
    """The faults logged after npu-info's marker: by printk time when both carry one, else by line."""
    if not isinstance(marker, dict):
        return []
    stamp, count = marker.get("last_timestamp"), marker.get("lines")
    if isinstance(stamp, (int, float)):
        return [f for f in faults if f.timestamp is not None and f.timestamp > stamp]
    if isinstance(count, int):
        return [f for f in faults if f.line_no > count]
    return []


def check_kernel_log(facts: BoardFacts, profile: Profile) -> CheckResult:
    if not profile.has_npu:
        return skipped(CHECK, f"Profile {profile.name} has no NPU whose kernel messages to check.")
    record = facts.extra.get(FACT_KEY)
    if not isinstance(record, dict):
        return failed(
            CHECK,
            "The kernel log was not read; run the suite over SSH (npu_accept.collect) so dmesg can be read.",
            "kernel-log-unknown",
        )
    if record.get("error"):
        return failed(
            CHECK,
            f"The kernel log could not be read ({record['error']}); run the suite as root or set "
            "kernel.dmesg_restrict=0 on the board.",
            "kernel-log-unreadable",
        )
    try:
        allow = compile_allowlist((profile.kernel_log.get("allow") if profile.kernel_log else None) or [])
    except ValueError as exc:
        return failed(CHECK, f"Profile {profile.name}: {exc}; fix kernel_log.allow.", "profile")
    lines = [str(line) for line in record.get("lines") or []]
    faults = scan(lines, profile.family, allow)
    if not faults:
        allowed = f", {len(allow)} allowlist pattern(s) applied" if allow else ""
        return passed(CHECK, f"The kernel log has no NPU fault ({len(lines)} lines read{allowed}).")
    live = during_run(faults, (facts.info or {}).get("kernel_log"))
    first = live[0] if live else faults[0]
    when = "during the run" if live else "since boot (before the run)"
    return failed(
        CHECK,
        f'The kernel logged {first.pattern.meaning} {when}: "{quote(first.text, first.matched)}" '
        f"({len(faults)} fault line(s), {len(live)} during the run); {first.pattern.action}.",
        "kernel-fault",
        during_run=len(live),
        since_boot=len(faults),
        lines=[f.text for f in faults[:10]],
    )


IMPLEMENTS = {(CHECK, "*"): check_kernel_log}
COLLECTORS = {"*": collect_kernel_log}
