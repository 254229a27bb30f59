# SPDX-License-Identifier: MIT
"""SD card / eMMC (in a USB reader) with bmaptool: copy only the mapped blocks, checksummed.

After the copy the mapped ranges are read back from the device itself (page cache dropped) and
checked against the bmap's per-range sha256: a card that silently drops writes fails here.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import BufferedIOBase
from pathlib import Path
from typing import TextIO

from npu_accept.flash.device import check_device
from npu_accept.flash.errors import FlashError
from npu_accept.flash.image import ImageInfo
from npu_accept.flash.plan import Plan, require_tool
from npu_accept.flash.progress import Progress
from npu_accept.flash.request import FlashRequest
from npu_accept.flash.spec import FlashSpec

_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")


def bmap_candidates(image: Path) -> list[Path]:
    """Where a bmap for `image` lives: IMAGE.bmap, or beside the uncompressed name (oe-core's wic.bmap)."""
    names = [image.name + ".bmap"]
    if image.suffix in _COMPRESSED_SUFFIXES:
        names.append(image.name[: -len(image.suffix)] + ".bmap")
    return [image.with_name(name) for name in names]


def find_bmap(image: Path) -> Path | None:
    return next((p for p in bmap_candidates(image) if p.is_file()), None)


def preflight() -> None:
    """bmaptool is installed (the card itself is checked again right before writing)."""
    require_tool("bmaptool")


def build_plan(spec: FlashSpec, info: ImageInfo, request: FlashRequest) -> Plan:
    if request.device is None:
        raise FlashError(
            "bmaptool needs the card's device: add --device /dev/sdX (npu-flash never guesses "
            "one; list disks with `lsblk -d -o NAME,SIZE,RM,TRAN,MODEL`)."
        )
    disk = check_device(request.device, request.system, request.force)
    plan = Plan("bmaptool")
    if disk.size_bytes is not None and disk.size_bytes < info.size and info.compression is None:
        raise FlashError(
            f"{request.device} holds {disk.size_bytes} bytes but the image needs {info.size}; "
            "use a bigger card."
        )
    plan.notes.append(
        f"target {request.device} ({disk.name}, "
        f"{'removable' if disk.removable else 'forced: not marked removable'})"
    )
    bmap = find_bmap(info.path)
    if bmap is None and info.compression is None:
        bmap = info.path.with_name(info.path.name + ".bmap")
        plan.add(
            "no .bmap beside the image: create one (maps the blocks that hold data)",
            "bmaptool",
            "create",
            "-o",
            str(bmap),
            str(info.path),
        )
    if bmap is None:
        plan.notes.append(
            f"no .bmap for the compressed image {info.path.name}: the whole image is written "
            '(IMAGE_FSTYPES += "wic.bmap" makes the build write one)'
        )
        plan.add(
            "write the whole image (no block map)",
            "bmaptool",
            "copy",
            "--nobmap",
            str(info.path),
            str(request.device),
        )
    else:
        plan.add(
            "write the mapped blocks, checking each range's sha256",
            "bmaptool",
            "copy",
            "--bmap",
            str(bmap),
            str(info.path),
            str(request.device),
        )
    return plan


@dataclass(frozen=True)
class BmapRange:
    first: int
    last: int
    sha256: str | None


@dataclass(frozen=True)
class BlockMap:
    image_size: int
    block_size: int
    ranges: tuple[BmapRange, ...]


def parse_bmap(path: Path) -> BlockMap:
    try:
        root = ET.parse(path).getroot()
        image_size = int((root.findtext("ImageSize") or "").strip())
        block_size = int((root.findtext("BlockSize") or "").strip())
    except (ET.ParseError, ValueError, OSError):
        raise FlashError(
            f"Block map {path} is not a bmaptool 2.x file; delete it so npu-flash creates a new one."
        ) from None
    checksum_type = (root.findtext("ChecksumType") or "").strip()
    ranges = []
    for element in root.iter("Range"):
        text = (element.text or "").strip()
        first, _, last = text.partition("-")
        ranges.append(
            BmapRange(
                int(first), int(last or first), element.get("chksum") if checksum_type == "sha256" else None
            )
        )
    return BlockMap(image_size, block_size, tuple(ranges))


def verify_device(bmap_path: Path, device: Path, stream: TextIO) -> int:
    """Read every mapped range back from the device and compare its sha256; returns bytes checked."""
    block_map = parse_bmap(bmap_path)
    if not any(r.sha256 for r in block_map.ranges):
        raise FlashError(f"Block map {bmap_path} carries no sha256 checksums; recreate it with bmaptool 3.x.")
    total = sum((r.last - r.first + 1) * block_map.block_size for r in block_map.ranges)
    progress = Progress(f"verify {device.name}", total, stream)
    fd = os.open(device, os.O_RDONLY)
    try:
        # what was just written may still sit in the page cache: drop it so the card is read
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        for item in block_map.ranges:
            start = item.first * block_map.block_size
            end = min((item.last + 1) * block_map.block_size, block_map.image_size)
            digest = hashlib.sha256()
            offset = start
            while offset < end:
                chunk = os.pread(fd, min(4 * 1024 * 1024, end - offset), offset)
                if not chunk:
                    break
                digest.update(chunk)
                offset += len(chunk)
                progress.advance(len(chunk))
            if item.sha256 and digest.hexdigest() != item.sha256:
                raise FlashError(
                    f"{device} reads back wrong data in blocks {item.first}-{item.last} after "
                    "writing; the card or reader drops writes, replace it."
                )
    finally:
        os.close(fd)
    progress.finish()
    return total


def _decompressed(image: Path, compression: str | None) -> Iterator[bytes]:
    """The image's disk bytes in chunks, decompressed as bmaptool does."""
    chunk = 4 * 1024 * 1024
    if compression == "zst":
        with subprocess.Popen(["zstd", "-dc", "--", str(image)], stdout=subprocess.PIPE) as proc:
            assert proc.stdout is not None
            while data := proc.stdout.read(chunk):
                yield data
        return
    openers: dict[str | None, Callable[[Path], BufferedIOBase]] = {
        None: lambda path: open(path, "rb"),
        "gz": lambda path: gzip.open(path, "rb"),
        "bz2": lambda path: bz2.open(path, "rb"),
        "xz": lambda path: lzma.open(path, "rb"),
    }
    with openers[compression](image) as handle:
        while data := handle.read(chunk):
            yield data


def verify_device_whole(image: Path, compression: str | None, device: Path, stream: TextIO) -> int:
    """Without a bmap: read the whole image back from the device and compare it byte for byte."""
    progress = Progress(f"verify {device.name}", image.stat().st_size if compression is None else 0, stream)
    fd = os.open(device, os.O_RDONLY)
    offset = 0
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        for data in _decompressed(image, compression):
            if os.pread(fd, len(data), offset) != data:
                raise FlashError(
                    f"{device} reads back wrong data near byte {offset} after writing; the "
                    "card or reader drops writes, replace it."
                )
            offset += len(data)
            progress.advance(len(data))
    finally:
        os.close(fd)
    progress.finish()
    return offset
