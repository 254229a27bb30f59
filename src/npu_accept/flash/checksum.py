# SPDX-License-Identifier: MIT
"""sha256 of an image, checked against the `.sha256`/`.sha256sum` file written beside it."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from npu_accept.flash.errors import FlashError
from npu_accept.flash.progress import Progress

_CHUNK = 4 * 1024 * 1024
_HEX64 = re.compile(r"\b([0-9a-fA-F]{64})\b")


@dataclass(frozen=True)
class ChecksumResult:
    path: Path
    sha256: str
    sidecar: Path | None  # the file the expected digest came from, None when there is none


def sha256_file(path: Path, stream: TextIO | None = None) -> str:
    """Hex sha256 of a file, drawing a progress bar on `stream` when it is a terminal."""
    digest = hashlib.sha256()
    progress = Progress(f"sha256 {path.name}", path.stat().st_size, stream) if stream else None
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            if progress:
                progress.advance(len(chunk))
    if progress:
        progress.finish()
    return digest.hexdigest()


def sidecar_for(image: Path) -> Path | None:
    """The checksum file beside an image (`IMAGE.sha256` or oe-core's `IMAGE.sha256sum`)."""
    for suffix in (".sha256", ".sha256sum"):
        candidate = image.with_name(image.name + suffix)
        if candidate.is_file():
            return candidate
    return None


def expected_digest(sidecar: Path, image: Path) -> str:
    """The digest a sidecar gives for `image`: a bare digest or `sha256sum` output lines."""
    try:
        text = sidecar.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise FlashError(
            f"Checksum file {sidecar} cannot be read ({exc.strerror}); fix its permissions."
        ) from None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) == 1:
        candidates = lines
    else:  # sha256sum output for several files: take the line naming this image
        candidates = [line for line in lines if Path(line.split()[-1].lstrip("*")).name == image.name]
    for line in candidates:
        match = _HEX64.search(line)
        if match:
            return match.group(1).lower()
    raise FlashError(
        f"Checksum file {sidecar} holds no sha256 digest for {image.name}; "
        f"regenerate it with `sha256sum {image.name} > {sidecar.name}`."
    )


def verify_image(image: Path, stream: TextIO) -> ChecksumResult:
    """Hash the image, print the digest, and refuse it when its sidecar disagrees."""
    digest = sha256_file(image, stream)
    sidecar = sidecar_for(image)
    stream.write(f"sha256 {digest}  {image}\n")
    if sidecar is None:
        stream.write(f"note: no {image.name}.sha256 beside the image; the digest above is unverified\n")
        return ChecksumResult(image, digest, None)
    want = expected_digest(sidecar, image)
    if want != digest:
        raise FlashError(
            f"Image {image} does not match its checksum file {sidecar.name} "
            f"(expected {want[:16]}…, got {digest[:16]}…); the file is corrupt or "
            "incomplete, copy it again from the build's deploy directory."
        )
    stream.write(f"sha256 matches {sidecar.name}\n")
    return ChecksumResult(image, digest, sidecar)
