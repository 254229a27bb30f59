# SPDX-License-Identifier: MIT
"""Which converter / toolkit made a model, which runtime is on the board, and whether they pair.

One table for both users: `npu-diagnose` (a converter print-out, a runtime log) and check 10
(the model on the board against the runtime on the board).  Each row of `KNOWN_PAIRINGS` names
its source; the rules below only state what those sources state:

- Neutron: NXP names each Neutron SDK after the BSP it belongs to, `NeutronSDK_<sdk>+LF_<bsp>`;
  a model converted with an SDK of another BSP release than the board's is not made for the
  board's driver, firmware and delegate.
- RKNN: the RKNN SDK user guide (v2.3.2, section 2.2.3 note 4) asks for rknn_server, librknnrt
  and RKNN-Toolkit2 of one release.  The board logs in the table show format-6 models (toolkit
  2.3.0 and one unnamed) refused by librknnrt 1.x at rknn_init with "Invalid RKNN model version
  6"; that any runtime older than the toolkit refuses its models is our generalisation of those
  logs, so the finding says the pair is unsupported, not that the runtime will refuse it.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass

NEUTRON_SDK = re.compile(r"NeutronSDK_(?P<sdk>\d+\.\d+\.\d+)\+LF_(?P<bsp>\d+\.\d+\.\d+_\d+\.\d+\.\d+)")
KERNEL_OF_BSP = re.compile(r"^(?P<kernel>\d+\.\d+\.\d+)_")
KERNEL_RELEASE = re.compile(r"(?P<kernel>\d+\.\d+\.\d+)")
RKNN_MAGIC = b"RKNN"
RKNN_MAX_JSON = 1 << 22  # the model's JSON description; a bigger one is not a .rknn we understand


@dataclass(frozen=True)
class Pairing:
    """A combination known to belong together, and where that is written."""

    family: str
    component: str
    version: str
    pairs_with: str
    source: str


KNOWN_PAIRINGS: tuple[Pairing, ...] = (
    Pairing(
        "neutron",
        "neutron-converter (Neutron SDK)",
        "2.2.2",
        "NXP BSP LF 6.12.49_2.2.0 (kernel 6.12.49)",
        "the SDK's own directory name NeutronSDK_2.2.2+LF_6.12.49_2.2.0 (i.MX95 A0 field report)",
    ),
    Pairing(
        "neutron",
        "Neutron delegate",
        "v1.0.0-f24d08e5",
        "NXP BSP LF 6.12.49_2.2.0 (kernel 6.12.49-lts-next)",
        "label_image log on rel_imx_6.12.49_2.2.0 (i.MX95 A0 field report)",
    ),
    Pairing(
        "neutron",
        "tflite-neutron-delegate source",
        "a5d640e64a2e7fb73a66ba2091cbe46b2dc4b45e",
        "NXP BSP LF 6.12.20_2.0.0",
        "meta-freescale-ml walnascar e55df3c0 tensorflow-lite-neutron-delegate_2.18.0.bb",
    ),
    Pairing(
        "neutron",
        "tflite-neutron-delegate source",
        "be8bf3997c70247bf46649f2304209fef82d4802",
        "NXP BSP LF 6.12.34_2.1.0",
        "meta-freescale-ml master b364d313 tensorflow-lite-neutron-delegate_2.19.0.bb",
    ),
    Pairing(
        "rknpu",
        "RKNN-Toolkit2",
        "2.3.2",
        "librknnrt 2.3.2 and rknn_server 2.3.2",
        "airockchip/rknn-toolkit2 tag v2.3.2 (42aa1d42) ships both in rknpu2/runtime; RKNN SDK "
        "v2.3.2 user guide 2.2.3 note 4",
    ),
    Pairing(
        "rknpu",
        "RKNN-Toolkit2 / Toolkit-Lite2",
        "2.3.0",
        "not librknnrt 1.3.0 or 1.4.0 (Invalid RKNN model version 6)",
        "airockchip/rknn-toolkit2 issues #254 and #281",
    ),
    Pairing(
        "rknpu",
        "a toolkit writing RKNN model format 6 (version not stated)",
        "format 6",
        "not librknnrt 1.5.0 (Invalid RKNN model version 6)",
        "rockchip-linux/rknn-toolkit2 issue #316",
    ),
)


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


def kernel_version(release: str | None) -> str | None:
    """'6.12.49-lts-next-g759f4038100f' -> '6.12.49'."""
    match = KERNEL_RELEASE.search(release or "")
    return match.group("kernel") if match else None


def neutron_mismatch(sdk: NeutronSdk, kernel_release: str | None) -> str | None:
    """One clause when the SDK belongs to another BSP than the board's kernel, else None."""
    board = kernel_version(kernel_release)
    if board is None or sdk.kernel is None or board == sdk.kernel:
        return None
    return (
        f"the model was converted with Neutron SDK {sdk.sdk} of BSP LF {sdk.bsp} (kernel {sdk.kernel}) "
        f"but the board runs kernel {kernel_release}"
    )


def known_delegate_bsp(version: str | None) -> str | None:
    """The BSP a Neutron delegate version string belongs to, from the table (None when unknown)."""
    if not version:
        return None
    for row in KNOWN_PAIRINGS:
        if row.family != "neutron" or "delegate" not in row.component:
            continue
        if row.version == version or (len(version) >= 8 and row.version.startswith(version.split("-")[-1])):
            return row.pairs_with
    return None


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    match = re.search(r"(\d+(?:\.\d+)+)", text or "")
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def rknn_mismatch(toolkit: str | None, runtime: str | None) -> str | None:
    """One clause when a model of toolkit TOOLKIT cannot be trusted on librknnrt RUNTIME."""
    made, runs = version_tuple(toolkit), version_tuple(runtime)
    if made is None or runs is None:
        return None
    if runs[:3] < made[:3]:
        return (
            f"the model was exported by RKNN-Toolkit2 {toolkit} but the board's librknnrt is the older "
            f"{runtime}"
        )
    return None


@dataclass(frozen=True)
class RknnModelInfo:
    format_version: int
    toolkit_version: str | None
    target_platform: str | None


def rknn_model_info(data: bytes) -> RknnModelInfo | None:
    """The header of a .rknn file: "RKNN", 4 bytes, the format version (u64 LE), the model data
    size (u64 LE), [40 more header bytes from format 2 on], the data, then a u64 LE length and the
    JSON description whose "version" is the toolkit that exported it. None when DATA is no .rknn."""
    if len(data) < 24 or data[:4] != RKNN_MAGIC:
        return None
    fmt, size = struct.unpack_from("<QQ", data, 8)
    header = 64 if fmt > 1 else 24
    description: dict[str, object] = {}
    at = header + size
    if at + 8 <= len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        if 0 < length <= RKNN_MAX_JSON and at + 8 + length <= len(data):
            try:
                parsed = json.loads(data[at + 8 : at + 8 + length].decode("utf-8", "replace"))
                description = parsed if isinstance(parsed, dict) else {}
            except ValueError:
                description = {}
    toolkit = description.get("version")
    platform = description.get("target_platform")
    return RknnModelInfo(
        format_version=int(fmt),
        toolkit_version=str(toolkit) if toolkit else None,
        target_platform=", ".join(map(str, platform))
        if isinstance(platform, list)
        else (str(platform) if platform else None),
    )
