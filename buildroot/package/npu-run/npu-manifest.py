# SPDX-License-Identifier: MIT
"""Write the build manifest of a Buildroot image, as meta-npu's npu-manifest.bbclass does for Yocto.

usage: python3 npu-manifest.py TARGET_DIR --family F --machine M --kernel RECIPE:VERSION
           [--driver RECIPE:VERSION] [--runtime ...] [--delegate ...] [--daemon ...]

Writes TARGET_DIR/usr/share/meta-npu/build-manifest.json (schema "npu-build-manifest/1", the
format docs/design.md defines): the NPU family, the board, the packages of each role with
their versions (an empty VERSION is null: not known at build time), and every model file
under /usr/share/npu-models with its sha256, hashed from the target directory itself.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

MANIFEST = "usr/share/meta-npu/build-manifest.json"
MODELS = "usr/share/npu-models"
ROLES = ("kernel", "driver", "runtime", "delegate", "daemon")


def record(value: str | None) -> dict | None:
    if not value:
        return None
    recipe, _, version = value.partition(":")
    return {"recipe": recipe, "version": version or None, "srcrev": None}


def models(target: Path) -> list[dict]:
    top = target / MODELS
    found = []
    for path in sorted(p for p in top.rglob("*") if p.is_file() and not p.is_symlink()):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        found.append({"path": "/" + str(path.relative_to(target)), "sha256": digest})
    return found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="npu-manifest.py")
    parser.add_argument("target", type=Path)
    parser.add_argument("--family", required=True)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--distro", default="buildroot")
    parser.add_argument("--image", default="rootfs")
    for role in ROLES:
        parser.add_argument(f"--{role}", default="")
    args = parser.parse_args(argv[1:])
    manifest = {
        "schema": "npu-build-manifest/1",
        "npu_family": args.family,
        "machine": args.machine,
        "distro": args.distro,
        "image": args.image,
        **{role: record(getattr(args, role)) for role in ROLES},
        "models": models(args.target),
    }
    path = args.target / MANIFEST
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
