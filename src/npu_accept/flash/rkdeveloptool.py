# SPDX-License-Identifier: MIT
"""Rockchip maskrom flashing with rkdeveloptool: `db LOADER`, `wl 0 IMAGE`, `rd`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from npu_accept.flash.errors import FlashError
from npu_accept.flash.image import ImageInfo, require_compression
from npu_accept.flash.plan import Plan, require_tool
from npu_accept.flash.request import FlashRequest
from npu_accept.flash.spec import FlashSpec

# RKBoot.cpp accepts a loader whose header tag is 0x544F4F42 ("BOOT") or 0x2052444C ("LDR ")
LOADER_TAGS = (b"BOOT", b"LDR ")


def loader_path(spec: FlashSpec, request: FlashRequest) -> Path:
    if request.loader is not None:
        candidates = [request.loader] if request.loader.is_file() else []
        if not candidates:
            raise FlashError(
                f"Loader {request.loader} does not exist; give the SoC's SPL loader, e.g. "
                "rk3588_spl_loader_v1.xx.yyy.bin made by rkbin's boot_merger."
            )
    else:
        pattern = spec.loader or ""
        candidates = sorted(request.image.parent.glob(pattern))
        if not candidates:
            raise FlashError(
                f"No loader matching {pattern} beside {request.image.name}; copy the SoC's "
                "SPL loader there (rkbin: ./tools/boot_merger RKBOOT/<SOC>MINIALL.ini) "
                "or pass --loader FILE."
            )
        if len(candidates) > 1:
            names = ", ".join(c.name for c in candidates)
            raise FlashError(f"Several loaders match {pattern} ({names}); choose one with --loader FILE.")
    loader = candidates[0]
    with loader.open("rb") as handle:
        tag = handle.read(4)
    if tag not in LOADER_TAGS:
        raise FlashError(
            f"{loader} is not a Rockchip loader (its header is not BOOT/LDR); give the "
            "*_spl_loader_*.bin made by rkbin's boot_merger."
        )
    return loader


REQUIRED = ("loader",)


def build_plan(spec: FlashSpec, info: ImageInfo, request: FlashRequest) -> Plan:
    if request.device is not None:
        raise FlashError(
            "rkdeveloptool writes the board's storage over USB in maskrom mode, not a "
            "local disk; drop --device (it is for bmaptool boards)."
        )
    require_compression(info, (None,), "rkdeveloptool")
    loader = loader_path(spec, request)
    plan = Plan("rkdeveloptool")
    plan.add(
        "load the SPL loader into the board's RAM (maskrom -> loader mode)",
        "rkdeveloptool",
        "db",
        str(loader),
    )
    plan.add(
        f"write the image from sector {spec.sector}", "rkdeveloptool", "wl", str(spec.sector), str(info.path)
    )
    plan.add("reset the board into the new image", "rkdeveloptool", "rd")
    return plan


def preflight() -> None:
    tool = require_tool("rkdeveloptool")
    out = subprocess.run([tool, "ld"], capture_output=True, text=True, timeout=30, check=False).stdout
    if "Maskrom" not in out and "Loader" not in out:
        raise FlashError(
            "No Rockchip board in maskrom mode was found by `rkdeveloptool ld`; hold the "
            "MASKROM button while powering the board and connect its USB OTG port."
        )
