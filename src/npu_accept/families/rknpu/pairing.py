# SPDX-License-Identifier: MIT
"""The RKNN-Toolkit2 version a .rknn records, and whether the board's librknnrt can be trusted with it.

The RKNN SDK user guide (v2.3.2, section 2.2.3 note 4) asks for rknn_server, librknnrt and
RKNN-Toolkit2 of one release (the rows of families/rknpu/versions.yaml; npu_accept.diagnose.pairings).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

from npu_accept.diagnose.pairings import version_tuple

RKNN_MAGIC = b"RKNN"
RKNN_MAX_JSON = 1 << 22  # the model's JSON description; a bigger one is not a .rknn we understand


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
