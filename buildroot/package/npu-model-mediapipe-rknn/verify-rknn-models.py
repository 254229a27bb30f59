# SPDX-License-Identifier: MIT
"""Check the RKNN model files against the sha256s of their rknn-models.json.

usage: python3 verify-rknn-models.py RKNN_DIR WHEEL_DIR
RKNN_DIR holds rknn-models.json with the inputs, .rknn models and goldens it names; WHEEL_DIR
holds the .tflite models unpacked from the mediapipe wheel. Exit 0 when every file matches,
1 with one sentence naming the first file that does not.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path


def expected_files(rknn_dir: Path, wheel_dir: Path) -> list[tuple[Path, str]]:
    manifest = json.loads((rknn_dir / "rknn-models.json").read_text())
    wanted = [(wheel_dir / m["member"], m["sha256"]) for m in manifest["source"]["models"].values()]
    for entry in manifest["models"].values():
        wanted.append((rknn_dir / entry["input"]["file"], entry["input"]["sha256"]))
        for facts in entry["socs"].values():
            wanted.append((rknn_dir / facts["rknn"], facts["sha256"]))
            wanted += [(rknn_dir / o["golden"], o["golden_sha256"]) for o in facts["outputs"]]
    return wanted


def main(argv: list[str]) -> int:
    rknn_dir, wheel_dir = Path(argv[1]), Path(argv[2])
    for path, sha256 in expected_files(rknn_dir, wheel_dir):
        if not path.is_file():
            print(
                f"verify-rknn-models: {path} is missing: restore it from the meta-npu repository.",
                file=sys.stderr,
            )
            return 1
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != sha256:
            print(
                f"verify-rknn-models: {path} has sha256 {actual} but rknn-models.json says {sha256}: "
                "restore it from the meta-npu repository or rebuild it with "
                "scripts/make-rknn-models --update.",
                file=sys.stderr,
            )
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
