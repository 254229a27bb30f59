# SPDX-License-Identifier: MIT
"""What the user asked npu-flash to do, after the command line was parsed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from npu_accept.flash.device import SystemView


@dataclass(frozen=True)
class FlashRequest:
    image: Path
    device: Path | None = None
    force: Path | None = None
    dry_run: bool = False
    soc_revision: str | None = None  # sysfs form ("2.0") or letter form ("B0")
    boot_container: Path | None = None  # uuu: overrides the profile's file
    loader: Path | None = None  # rkdeveloptool: overrides the profile's glob
    system: SystemView = SystemView()
