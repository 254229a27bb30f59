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


# --- recorded upstream values (tests/data/kernel-trees/*.json) ------------------------------------

RECORDS = ROOT / "tests" / "data" / "kernel-trees"


def _record_value(text: str, labels: dict[str, int]) -> tuple[str, list]:
    """A recorded property's dts text as fdtget prints it: ("s", strings) or ("x", cells)."""
    text = text.strip()
    if not text:
        return "x", []
    if text.startswith('"'):
        return "s", re.findall(r'"([^"]*)"', text)
    values: list[int] = []
    for group in re.findall(r"<([^>]*)>", text):
        for token in group.split():
            values.append(labels[token[1:]] if token.startswith("&") else int(token, 0))
    return "x", values


def record_mismatches(dtb: Path, record: dict, prefix: str = "") -> list[str]:
    """One sentence per recorded node or property that the compiled tree DTB does not carry as
    recorded. PREFIX is where the record's root sits in DTB (e.g. "/soc")."""
    problems: list[str] = []
    labels: dict[str, int] = {}
    for spec in record["nodes"]:
        path = prefix + spec["path"]
        if spec.get("label") and _exists(dtb, path) and "phandle" in properties(dtb, path):
            labels[spec["label"]] = int(fdtget(dtb, "-t", "x", path, "phandle"), 16)
    for spec in record["nodes"]:
        path = prefix + spec["path"]
        if not _exists(dtb, path):
            problems.append(f"{record['name']}: {path} is recorded but not in the tree.")
            continue
        present = properties(dtb, path)
        for name, text in spec["props"]:
            if name not in present:
                problems.append(f"{record['name']}: {path} lacks {name} (recorded: {text}).")
                continue
            try:
                kind, want = _record_value(text, labels)
            except KeyError as err:
                problems.append(
                    f"{record['name']}: {path} {name} refers to {err}, which has no phandle in the tree."
                )
                continue
            if not want:
                continue
            got_text = fdtget(dtb, "-t", kind, path, name)
            got = got_text.split() if kind == "s" else [int(v, 16) for v in got_text.split()]
            if kind == "s":
                want = " ".join(want).split()
            if got != want:
                problems.append(f"{record['name']}: {path} {name} is {got_text!r}, recorded {text!r}.")
    return problems


def _exists(dtb: Path, path: str) -> bool:
    return run(tool("fdtget"), dtb, "-l", path).returncode == 0
