# SPDX-License-Identifier: MIT
"""Rockchip NPU with the mainline Rocket accel driver (drivers/accel/rocket, Linux >= 6.18).

Facts: the rocket module (/proc/modules, /sys/module/rocket), the accel nodes /dev/accel/accel*,
the device-tree cores (compatible "rockchip,rk3588-rknn-core"), Mesa's Teflon TFLite delegate
/usr/lib/libteflon.so and the TFLite Python bindings. Rocket is an in-tree driver without a
version of its own, so the driver version is the kernel release.
"""

from __future__ import annotations

import importlib.util
import re
from typing import Any

from . import FamilyFacts
from .common import ProbeContext, dt_compatibles, module_present

DRIVER = "rocket"  # named by npu-info when no NPU is found
BACKENDS = {"tflite-delegate": "backends.tflite"}  # npu-run backend -> module

MODULE = "rocket"
COMPATIBLES = ("rockchip,rk3588-rknn-core",)
DELEGATE_PATH = "/usr/lib/libteflon.so"
BINDINGS = ("tflite_runtime", "ai_edge_litert")
DMESG_LINES_KEPT = 20


def _devices(ctx: ProbeContext) -> list[str]:
    return [f"/dev/accel/{name}" for name in ctx.listdir("/dev/accel") if re.fullmatch(r"accel\d+", name)]


def detect(ctx: ProbeContext) -> bool:
    # The device-tree cores alone identify a Rocket board: without the module (and so without
    # /dev/accel/accel*) npu-info must still report family rocket and name the missing driver,
    # not "no NPU" (which would also hide the Teflon delegate's facts).
    if module_present(ctx, MODULE):
        return True
    return any(c in dt_compatibles(ctx) for c in COMPATIBLES)


def _bindings() -> dict[str, Any] | None:
    for name in BINDINGS:
        spec = importlib.util.find_spec(name)
        if spec is not None:
            return {"name": name, "path": spec.origin, "version": None}
    return None


def probe(ctx: ProbeContext) -> FamilyFacts:
    errors: list[str] = []
    loaded = module_present(ctx, MODULE)
    if not loaded:
        errors.append(
            "the rocket module is not loaded; build the kernel with CONFIG_DRM_ACCEL_ROCKET "
            "and enable the NPU cores (rknn_core_*) in the device tree."
        )
    devices = _devices(ctx)
    if not devices:
        errors.append("no /dev/accel/accel* node; the rocket driver did not probe (see dmesg).")
    release = ctx.read_text("/proc/sys/kernel/osrelease")
    driver = {
        "name": MODULE,
        "version": release,
        "version_source": "/proc/sys/kernel/osrelease" if release else None,
        "module_loaded": loaded,
        "devices": devices,
        "firmware": None,
        "dmesg": [line for line in ctx.dmesg() if "rocket" in line.lower()][-DMESG_LINES_KEPT:],
    }
    dmesg_error = ctx.dmesg_error()
    if dmesg_error:
        errors.append(dmesg_error)
    delegate_present = ctx.exists(DELEGATE_PATH)
    if not delegate_present:
        errors.append(
            f"the Teflon delegate {DELEGATE_PATH} is missing; build Mesa with PACKAGECONFIG "
            "teflon and rocket and install libteflon."
        )
    runtime = _bindings()
    if runtime is None:
        errors.append(
            "no TFLite Python bindings (tflite_runtime or ai_edge_litert) are installed; "
            "install python3-tensorflow-lite."
        )
    return FamilyFacts(
        driver=driver,
        runtime=runtime,
        daemon=None,
        delegate={"path": DELEGATE_PATH, "present": delegate_present},
        memory=None,
        load=None,
        errors=errors,
    )
