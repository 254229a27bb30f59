# SPDX-License-Identifier: MIT
"""The neutron family's checks.

- check 6 (memory): the reserved-memory pool the driver allocates from is present in the device
  tree and at least the profile's size;
- check 10 (pairing): the profile's `pairing.converter` (the Neutron SDK the model was converted
  with, `NeutronSDK_x.y.z+LF_a.b.c_…`) against the board's kernel, and the delegate's version
  line (`npu_accept.families.neutron.pairing`, the rows of versions.yaml).
"""

from __future__ import annotations

from npu_accept.checks.base import CheckResult, failed, memory_expected, passed, skipped
from npu_accept.diagnose import pairings
from npu_accept.facts import BoardFacts
from npu_accept.families.neutron import pairing
from npu_accept.logparse import DELEGATE_VERSION
from npu_accept.profile import Profile

CHECK = "pairing"
MEMORY = "memory"


def check_neutron_pool(facts: BoardFacts, profile: Profile) -> CheckResult:
    minimum = memory_expected(facts, profile, "pool_min_bytes", "Neutron pool")
    if isinstance(minimum, CheckResult):
        return minimum
    pools = [p for p in (facts.info_section("memory").get("pools") or []) if isinstance(p, dict)]
    neutron = [p for p in pools if "neutron" in str(p.get("name", "")).lower()]
    if not neutron:
        names = ", ".join(str(p.get("name")) for p in pools) or "none"
        return failed(
            MEMORY,
            "The Neutron reserved-memory pool is missing from the device tree "
            f"(reserved-memory pools found: {names}); apply meta-npu's Neutron DMA pool overlay.",
            "pool-missing",
        )
    pool = max(neutron, key=lambda p: int(p.get("size") or 0))
    size = int(pool.get("size") or 0)
    if size < minimum:
        return failed(
            MEMORY,
            f"The Neutron pool {pool.get('name')} is {size} bytes, smaller than the "
            f"profile minimum {minimum}; enlarge the reserved-memory node.",
            "pool-small",
            size=size,
        )
    return passed(
        MEMORY,
        f"The Neutron pool {pool.get('name')} has {size // (1 << 20)} MiB "
        f"(at least {minimum // (1 << 20)} MiB), from {pool.get('source')}.",
        size=size,
    )


def check_neutron_pairing(facts: BoardFacts, profile: Profile) -> CheckResult:
    converter = profile.pairing.get("converter") if profile.pairing else None
    if not converter:
        return skipped(
            CHECK,
            f"Profile {profile.name} does not say which Neutron SDK converted its models "
            "(pairing.converter, e.g. NeutronSDK_2.2.2+LF_6.12.49_2.2.0).",
        )
    sdk = pairing.neutron_sdk(str(converter))
    if sdk is None:
        return failed(
            CHECK,
            f"Profile {profile.name}: pairing.converter '{converter}' is not a Neutron SDK name "
            "(NeutronSDK_<version>+LF_<bsp>); give the SDK directory the model was converted with.",
            "profile",
        )
    kernel = (facts.info or {}).get("kernel")
    clause = pairing.neutron_mismatch(sdk, kernel)
    if clause:
        return failed(
            CHECK,
            f"The model and the board do not pair: {clause}; convert with the Neutron SDK of the "
            "board's BSP or flash the BSP the SDK belongs to.",
            "converter-bsp",
        )
    version = _delegate_version(facts)
    bsp = pairings.known_delegate_bsp(version)
    board_kernel = pairings.kernel_version(kernel)  # None when the release is unreadable: not judged
    if bsp and board_kernel is not None and board_kernel not in bsp:
        return failed(
            CHECK,
            f"The Neutron delegate {version} belongs to {bsp} but the board runs kernel {kernel}; "
            "install the delegate of the board's BSP release.",
            "delegate-bsp",
        )
    return passed(
        CHECK,
        f"The models were converted with Neutron SDK {sdk.sdk} of BSP LF {sdk.bsp}, which pairs with "
        f"the board's kernel {kernel}" + (f" and delegate {version}" if version else "") + ".",
    )


def _delegate_version(facts: BoardFacts) -> str | None:
    for model in facts.models:
        lines = ((model.npu.report or {}).get("log") or {}).get("delegate_lines") if model.npu else None
        for line in lines or []:
            match = DELEGATE_VERSION.search(str(line))
            if match:
                return match.group("version")
    return None


IMPLEMENTS = {(MEMORY, "neutron"): check_neutron_pool, (CHECK, "neutron"): check_neutron_pairing}
