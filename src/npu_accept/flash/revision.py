# SPDX-License-Identifier: MIT
"""i.MX95 silicon revision vs the revision an imx-boot container was built for.

imx-mkimage (iMX95/soc.mak) appends `mx95<rev>-ahab-container.img` (the EdgeLock firmware of
that silicon revision, rev from `REV=` = meta-freescale's IMX_SOC_REV) into flash.bin; the
deploy directory keeps a copy under `imx-boot-tools/`. The container's revision is the one whose
ELE firmware bytes are embedded in it — a fact about the file, not about its name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from npu_accept.flash.errors import FlashError
from npu_accept.flash.spec import FlashSpec


@dataclass(frozen=True)
class RevisionFinding:
    container_rev: str | None  # A0 / A1 / B0, None when it cannot be told
    evidence: str  # the file that told it, or why not


def board_revision(spec: FlashSpec, given: str | None) -> str | None:
    """Normalise --soc-revision ("2.0" from sysfs, or "B0") to the letter form, None if not given."""
    if given is None:
        return None
    value = given.strip()
    if value.upper() in set(spec.soc_revisions.values()):
        return value.upper()
    if value in spec.soc_revisions:
        return spec.soc_revisions[value]
    known = ", ".join(f"{k} ({v})" for k, v in spec.soc_revisions.items()) or "none listed"
    raise FlashError(f"SoC revision '{given}' is unknown for board {spec.board}; use one of {known}.")


def revision_from_npu_info(path: Path) -> str:
    """soc.revision from a saved `npu-info --json` output (sysfs form, e.g. "2.0")."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FlashError(
            f"npu-info output {path} cannot be read as JSON ({exc}); save it with "
            "`npu-info --json > FILE` on the board."
        ) from None
    revision = (data.get("soc") or {}).get("revision") if isinstance(data, dict) else None
    if not revision:
        raise FlashError(f"npu-info output {path} has no soc.revision; pass --soc-revision instead.")
    return str(revision)


def container_revision(spec: FlashSpec, boot_container: Path) -> RevisionFinding:
    """Which revision's ELE firmware the boot container embeds (files from the deploy directory)."""
    if not spec.ele_container:
        return RevisionFinding(None, "the profile names no flash.ele_container")
    data = boot_container.read_bytes()
    looked = []
    for rev in sorted(set(spec.soc_revisions.values())):
        firmware = boot_container.parent / spec.ele_container.format(rev=rev.lower())
        looked.append(str(firmware.relative_to(boot_container.parent)))
        if firmware.is_file():
            blob = firmware.read_bytes()
            if blob and blob in data:
                return RevisionFinding(rev, f"{firmware.name} is embedded in {boot_container.name}")
    return RevisionFinding(
        None, f"none of {', '.join(looked)} beside it is embedded in {boot_container.name}"
    )


def check_revision(spec: FlashSpec, boot_container: Path, board_rev: str | None) -> list[str]:
    """Refuse a boot container built for another silicon revision; return notes to print."""
    finding = container_revision(spec, boot_container)
    notes = []
    if finding.container_rev:
        notes.append(
            f"boot container {boot_container.name} is for silicon {finding.container_rev} "
            f"({finding.evidence})"
        )
    if board_rev is None:
        notes.append(
            "board silicon revision unknown: pass --soc-revision (or --npu-info) to have the "
            "boot container checked against it"
        )
        return notes
    if finding.container_rev is None:
        raise FlashError(
            f"Cannot tell which silicon revision {boot_container.name} was built for "
            f"({finding.evidence}); copy the deploy directory's imx-boot-tools/ beside it."
        )
    if finding.container_rev != board_rev:
        raise FlashError(
            f"The board is i.MX95 {board_rev} but {boot_container.name} was built for "
            f'{finding.container_rev}; rebuild imx-boot with IMX_SOC_REV = "{board_rev}" '
            "in local.conf (the two do not boot each other's silicon)."
        )
    notes.append(f"board silicon {board_rev} matches the boot container")
    return notes
