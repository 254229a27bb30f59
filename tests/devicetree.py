# SPDX-License-Identifier: MIT
"""The boot flow's device-tree step, run here: meta-npu's npu_dts_include (npu-devicetree.bbclass)
appends the fragment to the board .dts, then cpp + dtc compile it as the kernel's dtc_cpp rule
does, and fdtget reads the blob back."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEVICETREE_CLASS = ROOT / "meta-npu" / "classes" / "npu-devicetree.bbclass"


class DeviceTreeError(AssertionError):
    """cpp, dtc or fdtget refused; the message carries the tool's own words."""


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed: install the Debian package listed in .ci/apt-packages.txt.")
    return path


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, text=True, capture_output=True, check=False)


def shell_function(source: Path, name: str) -> str:
    """The body of shell function NAME in a BitBake file (up to its closing brace)."""
    match = re.search(rf"^{name}\(\) {{\n(.*?)^}}", source.read_text(), re.S | re.M)
    assert match, f"{source.name} defines no shell function {name}()"
    return match.group(1)


def apply_dts_include(
    kernel_tree: Path, unpackdir: Path, fragment: str, boot_dtbs: str, arch: str = "arm64"
) -> subprocess.CompletedProcess[str]:
    """Run npu_dts_include() of npu-devicetree.bbclass with the values BitBake would give it."""
    body = shell_function(DEVICETREE_CLASS, "npu_dts_include")
    values = {
        "S": str(kernel_tree),
        "ARCH": arch,
        "UNPACKDIR": str(unpackdir),
        "NPU_DTS_FRAGMENT": fragment,
        "NPU_BOOT_DTB": boot_dtbs,
    }
    body = re.sub(r"\$\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), body)
    script = 'bbfatal() { echo "ERROR: $*" >&2; exit 1; }\nrun() {\n' + body + "}\nrun\n"
    return run("sh", "-c", script)


def compile_dts(board: Path, out: Path, include_dirs: tuple[Path, ...] = ()) -> Path:
    """cpp + dtc, as the kernel's dtc_cpp rule does; raises DeviceTreeError with the tool's message."""
    pre = out.with_suffix(".pre.dts")
    includes = [arg for d in (board.parent, *include_dirs) for arg in ("-I", str(d))]
    cpp = run(
        tool("cpp"),
        "-nostdinc",
        "-undef",
        "-D__DTS__",
        "-x",
        "assembler-with-cpp",
        "-P",
        *includes,
        "-o",
        pre,
        board,
    )
    if cpp.returncode:
        raise DeviceTreeError(f"cpp failed on {board.name}: {cpp.stderr.strip()}")
    dtc = run(tool("dtc"), "-I", "dts", "-O", "dtb", "-o", out, pre)
    if dtc.returncode:
        raise DeviceTreeError(f"dtc failed on {board.name}: {dtc.stderr.strip()}")
    return out


def fdtget(dtb: Path, *args: str) -> str:
    proc = run(tool("fdtget"), dtb, *args)
    if proc.returncode:
        raise DeviceTreeError(f"fdtget {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def cells(dtb: Path, node: str, prop: str) -> list[int]:
    return [int(v, 16) for v in fdtget(dtb, "-t", "x", node, prop).split()]


def properties(dtb: Path, node: str) -> list[str]:
    return fdtget(dtb, "-p", node).split()


def walk(dtb: Path, node: str = "/") -> list[str]:
    paths = [node]
    for child in fdtget(dtb, "-l", node).split():
        paths += walk(dtb, f"{node.rstrip('/')}/{child}")
    return paths
