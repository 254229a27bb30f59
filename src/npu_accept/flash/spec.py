# SPDX-License-Identifier: MIT
"""The `flash:` section of a board profile (docs/design.md, "Flashing")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npu_accept.flash.errors import FlashError
from npu_accept.paths import profile_dirs
from npu_accept.profile import ProfileError, load_profile


def method_names() -> tuple[str, ...]:
    """The methods the family packages register (`npu_accept.flash.methods`)."""
    from npu_accept.flash.methods import methods  # its modules import this one

    return tuple(methods())


def _required(method: str) -> tuple[str, ...]:
    from npu_accept.flash.methods import method as module_of

    return tuple(getattr(module_of(method), "REQUIRED", ()))


@dataclass(frozen=True)
class FlashSpec:
    board: str
    family: str
    source: Path
    method: str
    uuu_script: str = "emmc_all"
    boot_container: str | None = None  # uuu: file beside the image
    ele_container: str | None = None  # uuu: "imx-boot-tools/mx95{rev}-ahab-container.img"
    soc_revisions: dict[str, str] = field(default_factory=dict)  # sysfs revision -> A0/A1/B0
    loader: str | None = None  # rkdeveloptool: glob beside the image
    sector: int = 0  # rkdeveloptool: first LBA of `wl`


def load_flash_spec(board: str, profiles_dirs: Sequence[Path] = ()) -> FlashSpec:
    """Load the profile named by --board (searched in profiles_dirs, then the usual places:
    npu_accept.paths.profile_dirs) and return its validated `flash:` section."""
    try:
        profile = load_profile(board, profile_dirs(profiles_dirs))
    except ProfileError as exc:
        raise FlashError(str(exc)) from None
    return parse_flash_section(profile.flash, profile.name, profile.family, profile.source)


def _key(section: Mapping[str, Any], key: str, kind: type, source: Path, required: bool = False) -> Any:
    value = section.get(key)
    if value is None:
        if required:
            raise FlashError(
                f"Board profile {source}: key 'flash.{key}' is missing; add it as "
                "docs/design.md 'Flashing' describes."
            )
        return None
    if not isinstance(value, kind):
        raise FlashError(
            f"Board profile {source}: key 'flash.{key}' must be a {kind.__name__}; "
            "fix it as docs/design.md 'Flashing' describes."
        )
    return value


def parse_flash_section(section: Any, board: str, family: str, source: Path) -> FlashSpec:
    if section is None:
        raise FlashError(
            f"Board profile {source} has no 'flash:' section, so npu-flash does not know "
            "how to write this board; add one as docs/design.md 'Flashing' describes."
        )
    if not isinstance(section, Mapping):
        raise FlashError(
            f"Board profile {source}: key 'flash' must be a mapping; see docs/design.md 'Flashing'."
        )
    known = {"method", "uuu_script", "boot_container", "ele_container", "soc_revisions", "loader", "sector"}
    unknown = sorted(set(section) - known)
    if unknown:
        raise FlashError(
            f"Board profile {source}: key 'flash.{unknown[0]}' is unknown; use only "
            f"{', '.join(sorted(known))}."
        )
    method = _key(section, "method", str, source, required=True)
    known_methods = method_names()
    if method not in known_methods:
        raise FlashError(
            f"Board profile {source}: key 'flash.method' is '{method}'; "
            f"use one of {', '.join(known_methods)}."
        )
    required = _required(method)
    spec = FlashSpec(
        board=board,
        family=family,
        source=source,
        method=method,
        uuu_script=_key(section, "uuu_script", str, source) or "emmc_all",
        boot_container=_key(section, "boot_container", str, source, required="boot_container" in required),
        ele_container=_key(section, "ele_container", str, source),
        soc_revisions={
            str(k): str(v).upper() for k, v in (_key(section, "soc_revisions", dict, source) or {}).items()
        },
        loader=_key(section, "loader", str, source, required="loader" in required),
        sector=_key(section, "sector", int, source) or 0,
    )
    if spec.ele_container and "{rev}" not in spec.ele_container:
        raise FlashError(
            f"Board profile {source}: key 'flash.ele_container' must contain '{{rev}}' "
            "(the lower-case silicon revision, e.g. b0)."
        )
    return spec
