# SPDX-License-Identifier: MIT
"""Check 6 for rknpu (the vendor driver): the NPU owns exactly the SRAM region meta-npu's
device-tree fragment gives it (RK3588 956 KB = 0xef000, RK3576 480 KB = 0x78000; the RKNN SDK
v2.3.2 user guide, section 5.7). npu-info reads the region from the driver's dmesg line
"RKNPU: sram region: […), sram size: 0x…" and the debugfs bitmap /sys/kernel/debug/rknpu/mm.
Missing SRAM or another size fails, naming the fix; so does SRAM that a model run with
RKNN_FLAG_ENABLE_SRAM leaves unused (collectors.rknn_modes).
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, memory_expected, passed
from npu_accept.collectors.rknn_modes import FACT_KEY as MODES_KEY
from npu_accept.collectors.rknn_modes import collect_rknn_modes
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "memory"


def check_rknpu_sram(facts: BoardFacts, profile: Profile) -> CheckResult:
    expected = memory_expected(facts, profile, "sram_bytes", "NPU SRAM")
    if isinstance(expected, CheckResult):
        return expected
    sram = facts.info_section("memory").get("sram") or {}
    if not isinstance(sram, dict) or not sram.get("present"):
        return failed(
            CHECK,
            "The NPU has no SRAM (no 'sram region' in dmesg, no SRAM in /sys/kernel/debug/rknpu/mm); "
            "build the kernel with CONFIG_ROCKCHIP_RKNPU_SRAM and give the NPU its SRAM in the "
            "device tree (rockchip,sram = <&rknpu_sram>).",
            "sram-missing",
        )
    size = int(sram.get("size") or 0)
    if size != int(expected):
        return failed(
            CHECK,
            f"The NPU SRAM is {size:#x} bytes but the profile expects {int(expected):#x}; the device "
            "tree on the board is not the one meta-npu's SRAM fragment builds.",
            "sram-size",
            size=size,
        )
    where = f" at [{sram['start']:#x}, {sram['end']:#x})" if sram.get("start") is not None else ""
    owned = f"The NPU owns {size // 1024} KB of SRAM{where}, from {sram.get('source')}"
    used = sram_used(facts)
    if isinstance(used, CheckResult):
        return used
    return passed(CHECK, owned + (f"; {used}" if used else "") + ".", size=size)


def sram_used(facts: BoardFacts) -> CheckResult | str | None:
    """Whether a model run with RKNN_FLAG_ENABLE_SRAM really took SRAM (None: no such run)."""
    runs = ((facts.extra.get(MODES_KEY) or {}).get("sram") or {}).items()
    said = []
    for name, run in runs:
        if run.get("error"):
            return failed(
                CHECK, f"Model {name} did not run with the NPU SRAM enabled ({run['error']}).", "sram-run"
            )
        used = run.get("used_bytes")
        if not used:
            shown = "could not be read" if used is None else "showed 0 bytes used"
            return failed(
                CHECK,
                f"The NPU SRAM is configured but model {name}, run with RKNN_FLAG_ENABLE_SRAM, left it "
                f"unused (/sys/kernel/debug/rknpu/mm {shown} while the context held it); use a librknnrt "
                "of RKNN SDK 1.6.0 or newer and a kernel with CONFIG_ROCKCHIP_RKNPU_SRAM.",
                "sram-unused",
            )
        said.append(f"{name} held {used // 1024} KB of it while running")
    return ", ".join(said) or None


IMPLEMENTS = {(CHECK, "rknpu"): check_rknpu_sram}
COLLECTORS = {"rknpu": collect_rknn_modes}
