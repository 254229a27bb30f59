# SPDX-License-Identifier: MIT
"""i.MX over USB serial download with NXP's uuu: `uuu -b emmc_all BOOT IMAGE`.

`emmc_all`/`sd_all` are uuu built-in scripts (mfgtools uuu/emmc_burn_all.lst): boot the
container over SDP, then write the whole image with fastboot and the container after it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from npu_accept.flash.errors import FlashError
from npu_accept.flash.image import ImageInfo, require_compression
from npu_accept.flash.plan import Plan, require_tool
from npu_accept.flash.request import FlashRequest
from npu_accept.flash.revision import board_revision, check_revision
from npu_accept.flash.spec import FlashSpec

READABLE = (None, "gz", "bz2", "zst")  # libuuu/buffer.cpp decompresses these streams
BUILTIN_SCRIPTS = ("emmc_all", "sd_all", "nvme_all")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def boot_container_path(spec: FlashSpec, request: FlashRequest) -> Path:
    path = request.boot_container or request.image.parent / (spec.boot_container or "")
    if not path.is_file():
        raise FlashError(
            f"Boot container {path} does not exist; build imx-boot (it lands in "
            "tmp/deploy/images/<MACHINE>/ beside the image) or pass --boot-container FILE."
        )
    return path


def build_plan(spec: FlashSpec, info: ImageInfo, request: FlashRequest) -> Plan:
    if request.device is not None:
        raise FlashError(
            "uuu writes the board's eMMC over USB, not a local disk; drop --device "
            "(it is for bmaptool boards)."
        )
    if spec.uuu_script not in BUILTIN_SCRIPTS:
        raise FlashError(
            f"Board profile {spec.source}: key 'flash.uuu_script' is '{spec.uuu_script}'; "
            f"use one of {', '.join(BUILTIN_SCRIPTS)}."
        )
    require_compression(info, READABLE, "uuu")
    boot = boot_container_path(spec, request)
    plan = Plan("uuu")
    plan.notes.extend(check_revision(spec, boot, board_revision(spec, request.soc_revision)))
    plan.add(
        f"boot {boot.name} over USB, then write the image and the boot container "
        f"(uuu built-in script {spec.uuu_script})",
        "uuu",
        "-b",
        spec.uuu_script,
        str(boot),
        str(info.path),
    )
    return plan


def connected_devices(uuu: str) -> list[str]:
    """Rows of `uuu -lsusb`: boards in serial download mode that uuu knows."""
    try:
        out = subprocess.run([uuu, "-lsusb"], capture_output=True, text=True, timeout=30, check=False).stdout
    except subprocess.TimeoutExpired:
        raise FlashError(
            "`uuu -lsusb` did not answer within 30 s; replug the USB cable and try again."
        ) from None
    lines = [_ANSI.sub("", line).strip() for line in out.splitlines()]
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("====")) + 1
    except StopIteration:
        return []
    return [line for line in lines[start:] if line]


REQUIRED = ("boot_container",)


def preflight() -> None:
    uuu = require_tool("uuu")
    if not connected_devices(uuu):
        raise FlashError(
            "No i.MX board in serial download mode was found by `uuu -lsusb`; set the boot "
            "switches to serial download, connect the USB-C download port and "
            "power-cycle the board."
        )
