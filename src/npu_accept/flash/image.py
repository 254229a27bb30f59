# SPDX-License-Identifier: MIT
"""What kind of file an image is: compression by magic bytes, then a partition-table check."""

from __future__ import annotations

import bz2
import gzip
import lzma
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from npu_accept.flash.errors import FlashError

# magic bytes -> compression name, and the file name endings that go with it
_MAGIC = {
    b"\x1f\x8b": "gz",
    b"BZh": "bz2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zst",
}
_EXTENSIONS = {"gz": (".gz",), "bz2": (".bz2",), "xz": (".xz",), "zst": (".zst",)}


@dataclass(frozen=True)
class ImageInfo:
    path: Path
    compression: str | None  # None: a raw disk image
    size: int
    partitioned: bool | None  # MBR/GPT signature seen; None when it could not be looked at


def _compression(head: bytes) -> str | None:
    for magic, name in _MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def _first_sector(path: Path, compression: str | None) -> bytes | None:
    """The first 512 bytes of the disk image inside the file (decompressed when needed)."""
    try:
        if compression is None:
            with path.open("rb") as handle:
                return handle.read(512)
        if compression == "gz":
            with gzip.open(path, "rb") as handle:
                return handle.read(512)
        if compression == "bz2":
            with bz2.open(path, "rb") as handle:
                return handle.read(512)
        if compression == "xz":
            with lzma.open(path, "rb") as handle:
                return handle.read(512)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise FlashError(
            f"Image {path} is a damaged {compression} file ({exc}); "
            "copy it again from the build's deploy directory."
        ) from None
    zstd = shutil.which("zstd")
    if zstd is None:
        return None
    # read only the first sector; the rest of a multi-GiB image is never decompressed
    with subprocess.Popen(
        [zstd, "-dc", "--", str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    ) as proc:
        assert proc.stdout is not None
        sector = proc.stdout.read(512)
        proc.kill()
    if len(sector) < 512 and proc.returncode not in (0, -9):
        raise FlashError(
            f"Image {path} is a damaged zstd file; copy it again from the build's deploy directory."
        )
    return sector


def inspect_image(path: Path) -> ImageInfo:
    """Check that `path` is a (possibly compressed) partitioned disk image, as wic writes."""
    if not path.exists():
        raise FlashError(
            f"Image {path} does not exist; give the .wic (or .wic.zst) file from "
            "build/tmp/deploy/images/<MACHINE>/."
        )
    if not path.is_file():
        raise FlashError(f"Image {path} is not a regular file; give the .wic image file itself.")
    size = path.stat().st_size
    if size < 512:
        raise FlashError(
            f"Image {path} is only {size} bytes, too small to be a disk image; "
            "give the .wic image from the build's deploy directory."
        )
    with path.open("rb") as handle:
        head = handle.read(6)
    compression = _compression(head)
    suffix = path.suffix.lower()
    for name, endings in _EXTENSIONS.items():
        if suffix in endings and compression != name:
            actual = f"{compression}-compressed" if compression else "not compressed"
            raise FlashError(
                f"Image {path} is named {suffix} but is {actual}; rename it or give the right file."
            )
    sector = _first_sector(path, compression)
    partitioned = None if sector is None else len(sector) == 512 and sector[510:512] == b"\x55\xaa"
    if sector is not None and not partitioned:
        if len(sector) >= 262 and sector[257:262] == b"ustar":
            raise FlashError(
                f"Image {path} is a root filesystem tarball, not a disk image; give the "
                '.wic image (IMAGE_FSTYPES += "wic") instead.'
            )
        raise FlashError(
            f"Image {path} has no partition table (no MBR/GPT signature), so it is not a "
            "disk image; give the .wic image from the build's deploy directory."
        )
    return ImageInfo(path=path, compression=compression, size=size, partitioned=partitioned)


def require_compression(info: ImageInfo, allowed: tuple[str | None, ...], tool: str) -> None:
    """Refuse an image whose compression the flashing tool cannot read."""
    if info.compression in allowed:
        return
    readable = ", ".join("raw" if c is None else f".{c}" for c in allowed)
    hint = (
        f"decompress it first (e.g. `{_DECOMPRESS[info.compression]} {info.path.name}`)"
        if info.compression
        else "compress it"
    )
    raise FlashError(
        f"{tool} cannot read a {info.compression or 'raw'} image ({info.path.name}); "
        f"it reads {readable}: {hint}."
    )


_DECOMPRESS = {"gz": "gunzip -k", "bz2": "bunzip2 -k", "xz": "unxz -k", "zst": "unzstd"}
