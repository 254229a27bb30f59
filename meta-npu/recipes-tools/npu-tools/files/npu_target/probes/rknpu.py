# SPDX-License-Identifier: MIT
"""Rockchip RKNPU with the vendor driver (drivers/rknpu of the Rockchip BSP kernel), RK3588/RK3576.

Facts and where they come from (Rockchip's RKNN SDK v2.3.2 user guide):
- driver version: /sys/kernel/debug/rknpu/version ("RKNPU driver: v0.9.8"), then
  /proc/debug/rknpu/version, /proc/rknpu/version, then the DRM core's registration line in dmesg
  ("Initialized rknpu 0.9.8 20240828 for fdab0000.npu on minor 1");
- NPU load: /sys/kernel/debug/rknpu/load (then /proc/debug/rknpu/load);
- SRAM: dmesg "RKNPU: sram region: [0x…, 0x…), sram size: 0x…" and the bitmap
  /sys/kernel/debug/rknpu/mm ("SRAM total size: 978944, used: 0, free: 978944");
- runtime and daemon: the "librknnrt version: X.Y.Z" / "rknn_server version: X.Y.Z" strings
  inside /usr/lib/librknnrt.so and /usr/bin/rknn_server (what rknn_server itself greps), and the
  rknn_server processes in /proc.
"""

from __future__ import annotations

import re
from typing import Any

from . import FamilyFacts
from .common import ProbeContext, dt_compatibles, module_present

DRIVER = "rknpu"  # named by npu-info when no NPU is found
BACKENDS = {"rknn": "backends.rknn"}  # npu-run backend -> module

COMPATIBLES = (
    "rockchip,rk3588-rknpu",
    "rockchip,rk3576-rknpu",
    "rockchip,rk3568-rknpu",
    "rockchip,rk3562-rknpu",
)
VERSION_FILES = ("/sys/kernel/debug/rknpu/version", "/proc/debug/rknpu/version", "/proc/rknpu/version")
LOAD_FILES = ("/sys/kernel/debug/rknpu/load", "/proc/debug/rknpu/load", "/proc/rknpu/load")
MM_FILE = "/sys/kernel/debug/rknpu/mm"
RUNTIME_PATH = "/usr/lib/librknnrt.so"
SERVER_PATH = "/usr/bin/rknn_server"
DMESG_LINES_KEPT = 20

VERSION_TEXT = re.compile(r"v?(\d+\.\d+\.\d+)")
DMESG_VERSION = re.compile(r"Initialized rknpu (\d+\.\d+\.\d+)")
DMESG_SRAM = re.compile(r"sram region: \[0x([0-9a-fA-F]+), 0x([0-9a-fA-F]+)\), sram size: 0x([0-9a-fA-F]+)")
MM_TOTAL = re.compile(r"SRAM total size: (\d+), used: (\d+), free: (\d+)")


def binary_version(data: bytes | None, name: str) -> str | None:
    """X.Y.Z after "<name> version: " inside a binary, as `strings | grep` would find it."""
    if not data:
        return None
    found = re.search(re.escape(name).encode() + rb" version: (\d+(?:\.\d+)+)", data)
    return found.group(1).decode() if found else None


def _rknpu_dmesg(ctx: ProbeContext) -> list[str]:
    return [line for line in ctx.dmesg() if "rknpu" in line.lower()]


def detect(ctx: ProbeContext) -> bool:
    if any(ctx.exists(path) for path in VERSION_FILES) or module_present(ctx, "rknpu"):
        return True
    return any(c in dt_compatibles(ctx) for c in COMPATIBLES)


def _version(ctx: ProbeContext, errors: list[str]) -> tuple[str | None, str | None]:
    for path in VERSION_FILES:
        text = ctx.read_text(path)
        found = VERSION_TEXT.search(text or "")
        if found:
            return found.group(1), path
    matches = ctx.dmesg_grep(DMESG_VERSION.pattern)
    if matches:
        return matches[-1].group(1), "dmesg"
    errors.append(
        "the RKNPU driver version is unknown (no /sys/kernel/debug/rknpu/version, no "
        "/proc/debug/rknpu/version, nothing in dmesg); mount debugfs and build the kernel "
        "with CONFIG_ROCKCHIP_RKNPU and CONFIG_ROCKCHIP_RKNPU_DEBUG_FS."
    )
    return None, None


def _render_nodes(ctx: ProbeContext) -> list[str]:
    """/dev/dri/renderD* nodes whose device is the RKNPU (its of_node compatible says rknpu)."""
    nodes = []
    for name in ctx.listdir("/sys/class/drm"):
        if not name.startswith("renderD"):
            continue
        compatible = ctx.read_bytes(f"/sys/class/drm/{name}/device/of_node/compatible") or b""
        if b"rknpu" in compatible:
            nodes.append(f"/dev/dri/{name}")
    return nodes


def _sram(ctx: ProbeContext, errors: list[str]) -> dict[str, Any]:
    mm = ctx.read_text(MM_FILE)
    regions = ctx.dmesg_grep(DMESG_SRAM.pattern)
    sram: dict[str, Any] = {
        "present": False,
        "start": None,
        "end": None,
        "size": None,
        "source": None,
        "mm": mm,
        "used": None,
        "free": None,
    }
    if regions:
        start, end, size = (int(v, 16) for v in regions[-1].groups())
        sram.update(present=True, start=start, end=end, size=size, source="dmesg")
    totals = MM_TOTAL.search(mm or "")
    if totals:
        total, used, free = (int(v) for v in totals.groups())
        sram.update(used=used, free=free)
        if sram["size"] is None:
            sram.update(present=total > 0, size=total, source=MM_FILE)
        elif total != sram["size"]:
            errors.append(
                f"the RKNPU SRAM is {sram['size']:#x} bytes in dmesg but {total:#x} in "
                f"{MM_FILE}; the driver and the device tree disagree."
            )
    if not sram["present"]:
        errors.append(
            "the RKNPU has no SRAM (no 'sram region' in dmesg, no SRAM in "
            f"{MM_FILE}); give it SRAM in the device tree (rockchip,sram = <&rknpu_sram>) "
            "and build the kernel with CONFIG_ROCKCHIP_RKNPU_SRAM."
        )
    return sram


def _server_pids(ctx: ProbeContext) -> list[int]:
    pids = []
    for entry in ctx.listdir("/proc"):
        if entry.isdigit() and ctx.read_text(f"/proc/{entry}/comm") == "rknn_server":
            pids.append(int(entry))
    return pids


def _runtime_and_daemon(ctx: ProbeContext, errors: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    runtime_version = binary_version(ctx.read_bytes(RUNTIME_PATH), "librknnrt")
    if not ctx.exists(RUNTIME_PATH):
        errors.append(
            f"the RKNN runtime {RUNTIME_PATH} is missing; install librknnrt "
            "(rknn_server loads exactly that path)."
        )
    elif runtime_version is None:
        errors.append(
            f"{RUNTIME_PATH} has no 'librknnrt version' string; it is not Rockchip's "
            "runtime or it is damaged, reinstall librknnrt."
        )
    server_version = binary_version(ctx.read_bytes(SERVER_PATH), "rknn_server")
    pids = _server_pids(ctx)
    if not ctx.exists(SERVER_PATH):
        errors.append(f"{SERVER_PATH} is missing; install rknn-server.")
    elif not pids:
        errors.append(
            "rknn_server is not running; start it (systemctl start rknn-server or "
            "/etc/init.d/rknn-server start) and check its log."
        )
    if runtime_version and server_version and runtime_version != server_version:
        errors.append(
            f"rknn_server {server_version} and librknnrt {runtime_version} differ; install "
            "both from the same RKNN SDK release."
        )
    runtime = {
        "name": "librknnrt",
        "path": RUNTIME_PATH if ctx.exists(RUNTIME_PATH) else None,
        "version": runtime_version,
    }
    daemon = {
        "name": "rknn_server",
        "path": SERVER_PATH if ctx.exists(SERVER_PATH) else None,
        "version": server_version,
        "running": bool(pids),
        "pids": pids,
    }
    return runtime, daemon


def _load(ctx: ProbeContext) -> str | None:
    for path in LOAD_FILES:
        text = ctx.read_text(path)
        if text:
            return text
    return None


def probe(ctx: ProbeContext) -> FamilyFacts:
    errors: list[str] = []
    version, source = _version(ctx, errors)
    devices = _render_nodes(ctx)
    if not devices:
        errors.append(
            "no DRM render node of the RKNPU in /sys/class/drm; the rknpu driver did not probe (see dmesg)."
        )
    driver = {
        "name": "rknpu",
        "version": version,
        "version_source": source,
        "module_loaded": module_present(ctx, "rknpu") or version is not None,
        "devices": devices,
        "firmware": None,
        "dmesg": _rknpu_dmesg(ctx)[-DMESG_LINES_KEPT:],
    }
    dmesg_error = ctx.dmesg_error()
    if dmesg_error:
        errors.append(dmesg_error)
    sram = _sram(ctx, errors)
    runtime, daemon = _runtime_and_daemon(ctx, errors)
    load = _load(ctx)
    if load is None:
        errors.append("the NPU load is unknown (no /sys/kernel/debug/rknpu/load); mount debugfs.")
    return FamilyFacts(
        driver=driver,
        runtime=runtime,
        daemon=daemon,
        delegate=None,
        memory={"sram": sram, "pools": [], "ion": None},
        load=load,
        errors=errors,
    )
