# SPDX-License-Identifier: MIT
"""The Neutron SDK a model was converted with, and whether it pairs with the board's kernel.

NXP names each Neutron SDK after the BSP it belongs to, `NeutronSDK_<sdk>+LF_<bsp>`; a model
converted with an SDK of another BSP release than the board's is not made for the board's driver,
firmware and delegate (the rows of families/neutron/versions.yaml; npu_accept.diagnose.pairings).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from npu_accept.diagnose.pairings import kernel_version

NEUTRON_SDK = re.compile(r"NeutronSDK_(?P<sdk>\d+\.\d+\.\d+)\+LF_(?P<bsp>\d+\.\d+\.\d+_\d+\.\d+\.\d+)")
KERNEL_OF_BSP = re.compile(r"^(?P<kernel>\d+\.\d+\.\d+)_")


@dataclass(frozen=True)
class NeutronSdk:
    text: str
    sdk: str
    bsp: str  # e.g. "6.12.49_2.2.0"

    @property
    def kernel(self) -> str | None:
        match = KERNEL_OF_BSP.match(self.bsp)
        return match.group("kernel") if match else None


def neutron_sdk(text: str) -> NeutronSdk | None:
    match = NEUTRON_SDK.search(text)
    return NeutronSdk(match.group(0), match.group("sdk"), match.group("bsp")) if match else None


def neutron_mismatch(sdk: NeutronSdk, kernel_release: str | None) -> str | None:
    """One clause when the SDK belongs to another BSP than the board's kernel, else None."""
    board = kernel_version(kernel_release)
    if board is None or sdk.kernel is None or board == sdk.kernel:
        return None
    return (
        f"the model was converted with Neutron SDK {sdk.sdk} of BSP LF {sdk.bsp} (kernel {sdk.kernel}) "
        f"but the board runs kernel {kernel_release}"
    )
