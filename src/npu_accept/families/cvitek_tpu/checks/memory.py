# SPDX-License-Identifier: MIT
"""Check 6 for the Sophgo CV18xx TPU (family "cvitek-tpu"): the ION carveout.

The TPU runtime takes every buffer from ION: weights and command buffer at CVI_NN_RegisterModel,
tensors at CVI_NN_GetInputOutputTensors (TPU-MLIR guide, CV18xx FAQ 6). npu-info reads the
carveout heap's size from /sys/kernel/debug/ion/cvi_carveout_heap_dump/total_mem, else the
"ion-region" reserved-memory node. The profile's memory.ion_min_bytes is what the board's models
need; a smaller or missing carveout fails, naming the fix.
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, memory_expected, passed
from npu_accept.facts import BoardFacts
from npu_accept.profile import Profile

CHECK = "memory"
MIB = 1 << 20


def check_cvitek_ion(facts: BoardFacts, profile: Profile) -> CheckResult:
    expected = memory_expected(facts, profile, "ion_min_bytes", "ION carveout")
    if isinstance(expected, CheckResult):
        return expected
    ion = facts.info_section("memory").get("ion")
    if not isinstance(ion, dict) or not ion.get("size"):
        return failed(
            CHECK,
            "The TPU has no ION carveout (no ion-region in the device tree, no carveout heap in "
            "debugfs); boot meta-npu's SG2002 board tree (sg2002-milkv-duo256m-npu.dtb, "
            "installed as default.dtb) or add the board's memory map.",
            "ion-missing",
        )
    size = int(ion["size"])
    if size < int(expected):
        return failed(
            CHECK,
            f"The ION carveout is {size / MIB:.1f} MiB but the profile's models need at least "
            f"{int(expected) / MIB:.1f} MiB; enlarge the ion-region in the device tree "
            "(meta-npu's sg2002-milkv-duo256m-tpu-ion.dtsi gives the Duo 256M 75 MiB).",
            "ion-size",
            size=size,
        )
    return passed(
        CHECK,
        f"The TPU's ION carveout has {size / MIB:.1f} MiB (at least "
        f"{int(expected) / MIB:.1f} MiB), from {ion.get('source')}.",
        size=size,
    )


IMPLEMENTS = {(CHECK, "cvitek-tpu"): check_cvitek_ion}
