# SPDX-License-Identifier: MIT
"""Build the twin's Neutron stand-in delegate (libneutron_delegate.so) from its C source with gcc."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from npu_accept.paths import sim_dir

SOURCE_DIR = sim_dir() / "delegate"
SOURCES = ("neutron_twin_delegate.c", "tflite_abi.h")


class DelegateBuildError(RuntimeError):
    """gcc is missing or the delegate did not compile."""


def build_delegate(out_dir: Path, name: str = "libneutron_delegate.so") -> Path:
    """Compile the delegate into out_dir/name (skipped when it is newer than its sources)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / name
    newest = max((SOURCE_DIR / s).stat().st_mtime for s in SOURCES)
    if target.exists() and target.stat().st_mtime >= newest:
        return target
    gcc = shutil.which("gcc")
    if gcc is None:
        raise DelegateBuildError("gcc is not installed; apt-get install gcc libc6-dev.")
    tmp = target.with_suffix(".so.tmp")
    cmd = [
        gcc,
        "-shared",
        "-fPIC",
        "-O2",
        "-Wall",
        "-Wextra",
        "-Werror",
        "-fvisibility=hidden",
        "-o",
        str(tmp),
        str(SOURCE_DIR / "neutron_twin_delegate.c"),
        "-lm",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise DelegateBuildError(f"the twin delegate did not compile: {proc.stderr.strip()}")
    tmp.replace(target)
    return target
