# SPDX-License-Identifier: MIT
"""Sophgo CV18xx TPU (CV180x = CV1800B, CV181x = SG2002/SG2000) with sophgo/osdrv's driver.

Facts and where they come from (sophgo/osdrv sg200x-dev interdrv/, sophgo/cviruntime):
- the TPU driver is the module <chip>_tpu (interdrv/tpu/Makefile), platform driver "cvi-tpu"
  (compatible "cvitek,tpu"), device node /dev/cvi-tpu0; it exposes no version;
- the chip id is printed by <chip>_base at probe: "CVITEK CHIP ID = N" (interdrv/base/base.c);
- the chip family is the root compatible of the vendor device tree ("cvitek,cv181x",
  "cvitek,cv180x");
- the runtime is libcviruntime.so (/usr/lib on meta-npu and the Buildroot tree, /mnt/system/lib
  on Milk-V's SDK images) with model_runner beside it;
- ION: the carveout heap's size from /sys/kernel/debug/ion/cvi_carveout_heap_dump/total_mem,
  else the "ion-region" reserved-memory node of the device tree.
"""

from __future__ import annotations

import re
from typing import Any

from . import FamilyFacts
from .common import ProbeContext, dt_compatibles, loaded_modules, read_dt_strings, reserved_memory_pools

DRIVER = "cvi-tpu"  # named by npu-info when no NPU is found
BACKENDS = {"cvi": "backends.cvi"}  # npu-run backend -> module

DEVICE = "/dev/cvi-tpu0"
COMPATIBLE = "cvitek,tpu"
CHIPS = ("cv180x", "cv181x", "cv182x", "cv183x")
RUNTIME_PATHS = ("/usr/lib/libcviruntime.so", "/mnt/system/lib/libcviruntime.so")
MODEL_RUNNER_PATHS = ("/usr/bin/model_runner", "/mnt/system/usr/bin/model_runner")
ION_TOTAL = "/sys/kernel/debug/ion/cvi_carveout_heap_dump/total_mem"
DMESG_CHIP_ID = re.compile(r"CVITEK CHIP ID = (\d+)")
TPU_MODULE = re.compile(r"(cv18[0-3]x)_tpu|soph_tpu|cvi_tpu")
DMESG_LINES_KEPT = 20


def board_chip(ctx: ProbeContext) -> str | None:
    """The chip family from the device tree's root compatible ("cvitek,cv181x" -> "cv181x")."""
    for value in read_dt_strings(ctx, "compatible") or []:
        vendor, _, name = value.partition(",")
        if vendor == "cvitek" and name in CHIPS:
            return name
    return None


def _tpu_module(ctx: ProbeContext) -> str | None:
    for name in loaded_modules(ctx) or {}:
        if TPU_MODULE.fullmatch(name):
            return name
    for name in ctx.listdir("/sys/module"):
        if TPU_MODULE.fullmatch(name):
            return name
    return None


def detect(ctx: ProbeContext) -> bool:
    return ctx.exists(DEVICE) or _tpu_module(ctx) is not None or COMPATIBLE in dt_compatibles(ctx)


def _ion(ctx: ProbeContext, errors: list[str]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    pools = reserved_memory_pools(ctx)
    for pool in pools:
        pool["npu"] = "ion-region" in (pool.get("compatible") or [])
    total = ctx.read_text(ION_TOTAL)
    if total and total.split()[0].isdigit():
        return {"heap": "carveout", "size": int(total.split()[0]), "source": ION_TOTAL}, pools
    region = next((p for p in pools if p["npu"] and p["size"]), None)
    if region:
        return {"heap": "carveout", "size": region["size"], "source": region["source"]}, pools
    errors.append(
        "no ION carveout for the TPU (no ion-region in the device tree's reserved-memory, no "
        f"{ION_TOTAL}); boot meta-npu's SG2002 board tree or add the board's memory map."
    )
    return None, pools


def _runtime(ctx: ProbeContext, errors: list[str]) -> dict[str, Any]:
    path = next((p for p in RUNTIME_PATHS if ctx.exists(p)), None)
    runner = next((p for p in MODEL_RUNNER_PATHS if ctx.exists(p)), None)
    if path is None:
        errors.append(
            "the TPU runtime libcviruntime.so is missing (looked in /usr/lib and "
            "/mnt/system/lib); install cviruntime."
        )
    if runner is None:
        errors.append("model_runner is missing; install cviruntime-tools (it runs the cvi backend).")
    return {"name": "cviruntime", "path": path, "version": None, "model_runner": runner}


def probe(ctx: ProbeContext) -> FamilyFacts:
    errors: list[str] = []
    module = _tpu_module(ctx)
    chip = board_chip(ctx)
    if module is None:
        errors.append(
            "no CV18xx TPU module is loaded (cv181x_tpu/cv180x_tpu in /proc/modules); "
            "install and load the cvitek-tpu modules."
        )
    devices = [DEVICE] if ctx.exists(DEVICE) else []
    if not devices:
        errors.append(
            f"{DEVICE} is missing; the TPU driver did not probe: check that the device tree "
            f'has a "{COMPATIBLE}" node and read dmesg for cvi-tpu errors.'
        )
    chip_ids = ctx.dmesg_grep(DMESG_CHIP_ID.pattern)
    dmesg_error = ctx.dmesg_error()
    if dmesg_error:
        errors.append(dmesg_error)
    elif not chip_ids:
        errors.append(
            'no "CVITEK CHIP ID" line in dmesg; load the cvi base module '
            f"({chip or 'cv18xx'}_base), which prints it."
        )
    if chip is None:
        errors.append(
            "the device tree's root compatible names no CV18xx chip (cvitek,cv180x or "
            "cvitek,cv181x); boot the board with its vendor device tree."
        )
    ion, pools = _ion(ctx, errors)
    driver = {
        "name": module or (f"{chip}_tpu" if chip else "cvi-tpu"),
        "version": None,
        "version_source": None,
        "module_loaded": module is not None,
        "devices": devices,
        "firmware": None,
        "chip": chip,
        "dmesg": [line for line in ctx.dmesg() if "tpu" in line.lower() or "CVITEK" in line][
            -DMESG_LINES_KEPT:
        ],
    }
    return FamilyFacts(
        driver=driver,
        runtime=_runtime(ctx, errors),
        daemon=None,
        delegate=None,
        memory={"sram": None, "pools": pools, "ion": ion},
        load=ctx.read_text("/proc/tpu/usage_profiling"),
        chip_id=chip_ids[-1].group(1) if chip_ids else None,
        errors=errors,
    )
