# SPDX-License-Identifier: MIT
"""The NPU families meta-npu knows, one record each: the one place a family is described.

Read by npu-info on the board (which probe detects and describes the family), by the host suite
(the kernel options a missing driver points at, the default backend of a profile's models) and
by the layer: npu-base.bbclass reads it through meta-npu/lib/npu_layer (registered with addpylib in
conf/layer.conf) to check NPU_FAMILY and the vendor layers a family's packages come from;
tests/test_families.py holds the layer's manifest recipe table (NPU_*_RECIPE flags, which task
signatures depend on) and the profile schema's family list to this file.

Standard library only: it runs on the board (Python >= 3.9), on the host and inside BitBake.
"""

from __future__ import annotations

from typing import NamedTuple

# What a family's memory check judges.
DMA_POOL, SRAM, ION, NO_MEMORY = "dma-pool", "sram", "ion", "none"
# The manifest's driver recipe when the driver is part of the kernel: PREFERRED_PROVIDER_virtual/kernel.
KERNEL = "kernel"
NONE = "none"  # NPU_FAMILY of a machine without an NPU (the generic-cpu profile)


class Family(NamedTuple):
    name: str  # NPU_FAMILY, a profile's `family`, the npu-<name> override of npu-family.bbclass
    stack: str  # in words, for messages
    probe: str  # module of npu_target.probes that detects and describes it on the board
    backend: str  # npu-run backend of a profile model's accelerated run unless the model names one
    kernel_config: str  # what the kernel must provide, named when the driver is missing
    memory: str  # DMA_POOL, SRAM, ION or NO_MEMORY: what the memory check judges
    # BBFILE_COLLECTIONS the family's packages come from (checked at build start); "a|b": either.
    layers: tuple[str, ...]
    driver_recipe: str  # build manifest roles: recipe names, KERNEL, or "" (no such part, or not recorded)
    driver_version: str  # the driver's version as it reports it at run time ("" when not recorded)
    runtime_recipe: str
    delegate_recipe: str
    daemon_recipe: str


# Detection order matters: the open Rocket driver and the vendor RKNPU driver are both Rockchip.
FAMILIES: tuple[Family, ...] = (
    Family(
        name="neutron",
        stack="NXP i.MX95 Neutron (remoteproc firmware, TFLite external delegate)",
        probe="neutron",
        backend="tflite-delegate",
        kernel_config="CONFIG_NEUTRON and CONFIG_IMX_NEUTRON_REMOTEPROC",
        memory=DMA_POOL,
        # meta-freescale-ml (community) or NXP's meta-imx-ml (collection imx-machine-learning).
        layers=("freescale-layer", "meta-freescale-ml|imx-machine-learning"),
        driver_recipe=KERNEL,
        driver_version="1.0",
        runtime_recipe="neutron",
        delegate_recipe="tensorflow-lite-neutron-delegate",
        daemon_recipe="",
    ),
    Family(
        name="rknpu",
        stack="Rockchip RKNPU vendor driver with librknnrt and rknn_server",
        probe="rknpu",
        backend="rknn",
        kernel_config="CONFIG_ROCKCHIP_RKNPU",
        memory=SRAM,
        layers=(),
        # The driver is built into the BSP kernel (rknpu.cfg). Its run-time version (debugfs
        # "RKNPU driver: vX.Y.Z") is not recorded: the BSP kernel tree (JeffyCN/mirrors
        # kernel-6.1-2024_04_14) could not be read to confirm it (unconfirmed, so left empty).
        driver_recipe=KERNEL,
        driver_version="",
        runtime_recipe="librknnrt",
        delegate_recipe="",
        daemon_recipe="rknn-server",
    ),
    Family(
        name="rocket",
        stack="Rockchip NPU on mainline Linux (Rocket) with Mesa's Teflon delegate",
        probe="rocket",
        backend="tflite-delegate",
        kernel_config="CONFIG_DRM_ACCEL_ROCKET",
        memory=NO_MEMORY,
        layers=(),
        # The in-tree Rocket driver (rocket.cfg) exposes no version of its own: the kernel's
        # version stands for it. TFLite's Python bindings run the models, Mesa's Teflon delegates.
        driver_recipe=KERNEL,
        driver_version="",
        runtime_recipe="python3-tensorflow-lite",
        delegate_recipe="mesa",
        daemon_recipe="",
    ),
    Family(
        name="cvitek-tpu",
        stack="Sophgo CV18xx TPU with cviruntime",
        probe="cvitek",
        backend="cvi",
        kernel_config="the cvi-tpu kernel module",
        memory=ION,
        layers=(),
        # The out-of-tree cvi-tpu module (cvitek-tpu_git.bb) exposes no version, so none is
        # recorded; cviruntime is the runtime the models run on.
        driver_recipe="cvitek-tpu",
        driver_version="",
        runtime_recipe="cviruntime",
        delegate_recipe="",
        daemon_recipe="",
    ),
)


def names() -> tuple[str, ...]:
    """Every NPU_FAMILY value, "none" last."""
    return (*(f.name for f in FAMILIES), NONE)


def family(name: str) -> Family | None:
    """The record of family `name`, or None ("none" or an unknown name)."""
    return next((f for f in FAMILIES if f.name == name), None)
