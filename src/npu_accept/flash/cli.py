# SPDX-License-Identifier: MIT
"""npu-flash: write an image to a board the way its profile says, safely.

npu-flash --board PROFILE --image PATH [--device /dev/sdX] [--dry-run] [--force /dev/sdX]
          [--soc-revision REV | --npu-info FILE | --target USER@HOST[:PORT]]
          [--boot-container FILE] [--loader FILE] [--profiles-dir DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from npu_accept.flash import bmaptool
from npu_accept.flash.board_info import revision_over_ssh
from npu_accept.flash.checksum import verify_image
from npu_accept.flash.device import SystemView, check_device
from npu_accept.flash.errors import FlashError
from npu_accept.flash.image import inspect_image
from npu_accept.flash.methods import method
from npu_accept.flash.plan import Plan
from npu_accept.flash.request import FlashRequest
from npu_accept.flash.revision import revision_from_npu_info
from npu_accept.flash.spec import FlashSpec, load_flash_spec, method_names


def build_parser() -> argparse.ArgumentParser:
    *others, last = method_names()
    parser = argparse.ArgumentParser(
        prog="npu-flash",
        description="Write a meta-npu image to a board with the method of its profile "
        f"({', '.join(others)} or {last}), after checking the image and the target.",
    )
    parser.add_argument(
        "--board", required=True, help="board profile name (npu-accept profiles lists them) or YAML path"
    )
    parser.add_argument(
        "--image", required=True, type=Path, help="the .wic/.img image (optionally compressed)"
    )
    parser.add_argument(
        "--device", type=Path, help="block device of the SD card / eMMC reader (bmaptool boards)"
    )
    parser.add_argument(
        "--force",
        type=Path,
        metavar="DEVICE",
        help="write to a disk not marked removable; must repeat --device",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="check everything, print the exact commands, write nothing"
    )
    revision = parser.add_mutually_exclusive_group()
    revision.add_argument("--soc-revision", help="the board's silicon revision: sysfs form (2.0) or A0/A1/B0")
    revision.add_argument(
        "--npu-info", type=Path, metavar="FILE", help="saved `npu-info --json` of the board"
    )
    revision.add_argument(
        "--target", metavar="USER@HOST[:PORT]", help="read the revision from the running board"
    )
    parser.add_argument("--identity", type=Path, help="SSH key for --target")
    parser.add_argument(
        "--known-hosts", type=Path, help="known_hosts file for --target (default ~/.ssh/known_hosts)"
    )
    parser.add_argument("--boot-container", type=Path, help="i.MX boot container instead of the profile's")
    parser.add_argument("--loader", type=Path, help="Rockchip SPL loader instead of the profile's glob")
    parser.add_argument(
        "--profiles-dir",
        type=Path,
        action="append",
        default=[],
        help="a directory of your own board profiles, searched before the shipped ones (repeatable)",
    )
    return parser


def _soc_revision(args: argparse.Namespace) -> str | None:
    if args.npu_info is not None:
        return revision_from_npu_info(args.npu_info)
    if args.target is not None:
        return revision_over_ssh(args.target, args.identity, args.known_hosts)
    given: str | None = args.soc_revision  # argparse's Namespace attributes are Any
    return given


def prepare(spec: FlashSpec, request: FlashRequest, stream: TextIO) -> Plan:
    """Check the image and the target, verify the checksum, and return the plan (nothing written)."""
    info = inspect_image(request.image)
    plan = method(spec.method).build_plan(spec, info, request)
    verify_image(request.image, stream)
    return plan


def execute(spec: FlashSpec, request: FlashRequest, plan: Plan, stream: TextIO) -> None:
    method(spec.method).preflight()
    for note in plan.notes:
        stream.write(f"note: {note}\n")
    if spec.method == "bmaptool" and request.device is not None:
        # Again, right before writing: hashing the image took minutes in which a desktop's
        # automounter or another program may have taken the card.
        check_device(request.device, request.system, request.force)
    plan.run(stream)
    if spec.method == "bmaptool" and request.device is not None:
        bmap = bmaptool.find_bmap(request.image)
        if bmap is not None:
            checked = bmaptool.verify_device(bmap, request.device, stream)
            stream.write(
                f"read back {checked} bytes from {request.device}: all mapped ranges match the bmap\n"
            )
        else:
            compression = inspect_image(request.image).compression
            checked = bmaptool.verify_device_whole(request.image, compression, request.device, stream)
            stream.write(f"read back {checked} bytes from {request.device}: the whole image matches\n")
    stream.write(f"{spec.board}: flashed {request.image.name}\n")


def run(argv: list[str] | None = None, stream: TextIO | None = None, system: SystemView | None = None) -> int:
    """The CLI; `system` points the device checks at another sysfs/mount table (tests)."""
    stream = stream or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        spec = load_flash_spec(args.board, args.profiles_dir)
        request = FlashRequest(
            image=args.image,
            device=args.device,
            force=args.force,
            dry_run=args.dry_run,
            soc_revision=_soc_revision(args),
            boot_container=args.boot_container,
            loader=args.loader,
            system=system or SystemView(),
        )
        plan = prepare(spec, request, stream)
        if args.dry_run:
            plan.print(sys.stdout)
            return 0
        execute(spec, request, plan, stream)
        return 0
    except FlashError as exc:
        stream.write(f"npu-flash: {exc}\n")
        return 1
    except KeyboardInterrupt:
        stream.write("npu-flash: interrupted; the target may hold a partial image, flash it again.\n")
        return 130


def main() -> None:
    sys.exit(run())


if __name__ == "__main__":
    main()
