# SPDX-License-Identifier: MIT
"""Readers shared by all probes: files under sysfs/procfs/device tree, the `dmesg` command, the manifest.

Everything goes through a ProbeContext so that npu-info can also inspect a copied tree (`--root`).
Nothing here raises for a missing fact: readers return None and the caller records one sentence.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST_PATH = "/usr/share/meta-npu/build-manifest.json"
DT_BASES = ("/proc/device-tree", "/sys/firmware/devicetree/base")
COMMAND_TIMEOUT_S = 10


@dataclass
class ProbeContext:
    """Where the probes read from; `root` is "/" on a board."""

    root: Path = Path("/")
    _dmesg_cache: list[str] | None = field(default=None, repr=False)
    _dmesg_error: str | None = field(default=None, repr=False)

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def exists(self, absolute: str) -> bool:
        return os.path.lexists(self.path(absolute))

    def read_text(self, absolute: str) -> str | None:
        """File content stripped of surrounding whitespace and NULs, or None if unreadable."""
        try:
            data = self.path(absolute).read_bytes()
        except OSError:
            return None
        return data.decode("utf-8", "replace").strip().strip("\x00").strip()

    def read_bytes(self, absolute: str) -> bytes | None:
        try:
            return self.path(absolute).read_bytes()
        except OSError:
            return None

    def listdir(self, absolute: str) -> list[str]:
        try:
            return sorted(os.listdir(self.path(absolute)))
        except OSError:
            return []

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        """Run a command found on PATH; (returncode, stdout, stderr), returncode 127 if absent."""
        exe = shutil.which(argv[0])
        if exe is None:
            return 127, "", f"{argv[0]}: command not found"
        try:
            proc = subprocess.run(
                [exe, *argv[1:]], capture_output=True, timeout=COMMAND_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return 124, "", f"{argv[0]} did not finish within {COMMAND_TIMEOUT_S} s"
        except OSError as exc:
            return 126, "", f"{argv[0]}: {exc.strerror}"
        return (
            proc.returncode,
            proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"),
        )

    def dmesg(self) -> list[str]:
        """Kernel log lines from the `dmesg` command (what a board has), cached per context."""
        if self._dmesg_cache is None:
            code, out, err = self.run(["dmesg"])
            if code != 0:
                self._dmesg_error = (
                    f"dmesg failed (exit {code}: {err.strip()[:200]}); "
                    "run npu-info as root or set kernel.dmesg_restrict=0."
                )
                self._dmesg_cache = []
            else:
                self._dmesg_cache = out.splitlines()
        return self._dmesg_cache

    def dmesg_error(self) -> str | None:
        self.dmesg()
        return self._dmesg_error

    def dmesg_grep(self, pattern: str) -> list[re.Match[str]]:
        regex = re.compile(pattern)
        matches = []
        for line in self.dmesg():
            found = regex.search(line)
            if found:
                matches.append(found)
        return matches

    def dt_base(self) -> str | None:
        for base in DT_BASES:
            if self.exists(base):
                return base
        return None


def read_dt_strings(ctx: ProbeContext, relative: str) -> list[str] | None:
    """A device-tree string-list property (NUL separated), e.g. "compatible"."""
    base = ctx.dt_base()
    if base is None:
        return None
    data = ctx.read_bytes(f"{base}/{relative}")
    if data is None:
        return None
    return [part.decode("utf-8", "replace") for part in data.split(b"\x00") if part]


def read_soc(ctx: ProbeContext) -> dict[str, Any]:
    """SoC identity from /sys/devices/soc0 and the device tree's model/compatible."""
    model = read_dt_strings(ctx, "model")
    return {
        "soc_id": ctx.read_text("/sys/devices/soc0/soc_id"),
        "revision": ctx.read_text("/sys/devices/soc0/revision"),
        "family": ctx.read_text("/sys/devices/soc0/family"),
        "machine": (model[0] if model else None) or ctx.read_text("/sys/devices/soc0/machine"),
        "compatible": read_dt_strings(ctx, "compatible"),
        "chip_id": None,
    }


def dt_compatibles(ctx: ProbeContext) -> set[str]:
    """Every `compatible` string of every enabled-or-not node in the device tree (depth-first)."""
    base = ctx.dt_base()
    found: set[str] = set()
    if base is None:
        return found
    top = ctx.path(base)
    for dirpath, _dirnames, filenames in os.walk(top):
        if "compatible" in filenames:
            try:
                data = (Path(dirpath) / "compatible").read_bytes()
            except OSError:
                continue
            found.update(p.decode("utf-8", "replace") for p in data.split(b"\x00") if p)
    return found


def loaded_modules(ctx: ProbeContext) -> dict[str, str] | None:
    """/proc/modules as {name: state}; None if unreadable."""
    text = ctx.read_text("/proc/modules")
    if text is None:
        return None
    modules = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 5:
            modules[fields[0]] = fields[4]
    return modules


def module_present(ctx: ProbeContext, name: str) -> bool:
    """True if the module is loaded (/proc/modules) or built in (/sys/module/<name> exists)."""
    modules = loaded_modules(ctx) or {}
    return name in modules or ctx.exists(f"/sys/module/{name}")


def remoteprocs(ctx: ProbeContext) -> list[dict[str, str | None]]:
    """Every /sys/class/remoteproc/* with its name, firmware and state."""
    procs = []
    for entry in ctx.listdir("/sys/class/remoteproc"):
        base = f"/sys/class/remoteproc/{entry}"
        procs.append(
            {
                "id": entry,
                "name": ctx.read_text(f"{base}/name"),
                "firmware": ctx.read_text(f"{base}/firmware"),
                "state": ctx.read_text(f"{base}/state"),
            }
        )
    return procs


def _be_cells(data: bytes, cells: int, offset: int) -> int:
    value = 0
    for i in range(cells):
        value = (value << 32) | int.from_bytes(data[offset + 4 * i : offset + 4 * i + 4], "big")
    return value


def reserved_memory_pools(ctx: ProbeContext) -> list[dict[str, Any]]:
    """Nodes under /reserved-memory with their size (from `size` or `reg`) and compatible."""
    base = ctx.dt_base()
    if base is None:
        return []
    rm = f"{base}/reserved-memory"
    addr_cells = _cells(ctx.read_bytes(f"{rm}/#address-cells"), 2)
    size_cells = _cells(ctx.read_bytes(f"{rm}/#size-cells"), 2)
    pools = []
    for name in ctx.listdir(rm):
        node = f"{rm}/{name}"
        if not ctx.path(node).is_dir():
            continue
        size = None
        start = None
        size_raw = ctx.read_bytes(f"{node}/size")
        reg_raw = ctx.read_bytes(f"{node}/reg")
        if size_raw and len(size_raw) >= 4 * size_cells:
            size = _be_cells(size_raw, size_cells, 0)
        elif reg_raw and len(reg_raw) >= 4 * (addr_cells + size_cells):
            start = _be_cells(reg_raw, addr_cells, 0)
            size = _be_cells(reg_raw, size_cells, 4 * addr_cells)
        compatible = read_dt_strings(ctx, f"reserved-memory/{name}/compatible")
        pools.append({"name": name, "start": start, "size": size, "compatible": compatible, "source": node})
    return pools


def _cells(raw: bytes | None, default: int) -> int:
    if raw and len(raw) >= 4:
        return int.from_bytes(raw[:4], "big")
    return default


def read_manifest(ctx: ProbeContext, errors: list[str]) -> dict[str, Any] | None:
    raw = ctx.read_text(MANIFEST_PATH)
    if raw is None:
        errors.append(
            f"build manifest {MANIFEST_PATH} is missing; build the image with meta-npu's "
            "npu-image (npu-manifest class)."
        )
        return None
    try:
        manifest = json.loads(raw)
    except ValueError as exc:
        errors.append(f"build manifest {MANIFEST_PATH} is not valid JSON ({exc}); rebuild the image.")
        return None
    if not isinstance(manifest, dict):
        errors.append(f"build manifest {MANIFEST_PATH} is not a JSON object; rebuild the image.")
        return None
    return manifest


def file_version_strings(ctx: ProbeContext, absolute: str, pattern: str) -> str | None:
    """First match group of `pattern` in the printable strings of a binary (like `strings | grep`)."""
    data = ctx.read_bytes(absolute)
    if data is None:
        return None
    found = re.search(pattern.encode(), data)
    return found.group(1).decode("utf-8", "replace") if found else None


PRINTK_TIME = re.compile(r"^\s*(?:<\d+>)?\[\s*(\d+\.\d+)\]")


def kernel_log_marker(ctx: ProbeContext) -> dict[str, Any]:
    """Where the kernel log stands now, so that lines logged later (during the model runs) can be
    told from those since boot: the line count and the printk time of the last line."""
    lines = ctx.dmesg()
    stamp = PRINTK_TIME.match(lines[-1]) if lines else None
    return {
        "lines": len(lines),
        "last_timestamp": float(stamp.group(1)) if stamp else None,
        "readable": ctx.dmesg_error() is None,
    }
