"""The CV18xx part of the layer: TPU/ION overlay, kernel-module and runtime recipes, kas entry.

The overlay is compiled by dtc and applied by fdtoverlay onto a base tree shaped like the vendor
kernel's (labels clk/rst, a reserved-memory node, 256 MiB of DRAM); the result is read back
with fdtget and checked against the Duo 256M memory map (ION below the 2 MiB FreeRTOS area).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "meta-npu" / "dynamic-layers" / "riscv-layer"
OVERLAY = LAYER / "recipes-kernel" / "linux" / "files" / "cv181x-tpu-ion.dtso"
KAS = ROOT / "kas" / "milkv-duo256m.yml"
MIB = 1 << 20

# Milk-V Duo 256M memory map (riscv/meta-riscv master, recipes-bsp/u-boot/files/milkv-duo/
# milkv-duo256m/memmap.py): DRAM 256 MiB at 0x80000000, FreeRTOS takes its top 2 MiB, ION is
# 75 MiB right below, 22 MiB of which the camera path keeps (2 MiB H.26x + 20 MiB ISP).
DRAM_BASE = 0x80000000
DRAM_SIZE = 256 * MIB
FREERTOS_SIZE = 2 * MIB
CAMERA_ION = 22 * MIB
# What the TPU must at least get: two INT8 ResNet-18-class models at once (weights ~11 MiB each,
# activations and command buffers a few MiB more), i.e. more than the 26.8 MiB of the 64 MiB Duo.
TPU_ION_MIN = 32 * MIB

BASE_DTS = """/dts-v1/;
/ {
	#address-cells = <2>;
	#size-cells = <2>;
	memory@80000000 {
		device_type = "memory";
		reg = <0x0 0x80000000 0x0 0x0fe00000>;
	};
	reserved-memory {
		#address-cells = <2>;
		#size-cells = <2>;
		ranges;
	};
	clk: clock-controller {
		#clock-cells = <1>;
	};
	rst: reset-controller {
		#reset-cells = <1>;
	};
	plic0: interrupt-controller@70000000 {
		reg = <0x0 0x70000000 0x0 0x4000000>;
		interrupt-controller;
		#interrupt-cells = <2>;
	};
};
"""


def dtc(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("dtc")
    assert exe, "dtc is missing: apt-get install device-tree-compiler (.ci/apt-packages.txt)"
    return subprocess.run([exe, "-@", *extra, "-I", "dts", "-O", "dtb", "-o", str(out), str(source)],
                          capture_output=True, text=True, check=False)


def fdtget(dtb: Path, node: str, prop: str, kind: str = "x") -> list[str]:
    proc = subprocess.run(["fdtget", f"-t{kind}", str(dtb), node, prop],
                          capture_output=True, text=True, check=True)
    return proc.stdout.split()


@dataclass
class IonLayout:
    start: int
    size: int
    limit: int

    def problems(self) -> list[str]:
        """Every way the carveout breaks the board's memory map, one sentence each."""
        out = []
        freertos = DRAM_BASE + DRAM_SIZE - FREERTOS_SIZE
        if self.start < DRAM_BASE or self.start + self.size > freertos:
            out.append(f"ION [{self.start:#x}, {self.start + self.size:#x}) leaves DRAM below the "
                       f"FreeRTOS area at {freertos:#x}")
        if self.limit != self.size:
            out.append(f"alloc-ranges length {self.limit:#x} differs from size {self.size:#x}")
        if self.size - CAMERA_ION < TPU_ION_MIN:
            out.append(f"ION {self.size // MIB} MiB leaves under {TPU_ION_MIN // MIB} MiB for the TPU")
        return out


def applied(tmp_path: Path, overlay_text: str) -> Path:
    base_dts, base = tmp_path / "base.dts", tmp_path / "base.dtb"
    base_dts.write_text(BASE_DTS)
    assert dtc(base_dts, base).returncode == 0
    src, dtbo = tmp_path / "overlay.dtso", tmp_path / "overlay.dtbo"
    src.write_text(overlay_text)
    compiled = dtc(src, dtbo)
    assert compiled.returncode == 0, compiled.stderr
    out = tmp_path / "out.dtb"
    proc = subprocess.run(["fdtoverlay", "-i", str(base), "-o", str(out), str(dtbo)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return out


def ion_layout(dtb: Path) -> IonLayout:
    size = [int(v, 16) for v in fdtget(dtb, "/reserved-memory/ion", "size")]
    ranges = [int(v, 16) for v in fdtget(dtb, "/reserved-memory/ion", "alloc-ranges")]
    return IonLayout(start=(ranges[0] << 32) | ranges[1], size=(size[0] << 32) | size[1],
                     limit=(ranges[2] << 32) | ranges[3])


# ------------------------------------------------------------------ overlay

def test_overlay_compiles_without_warnings(tmp_path: Path) -> None:
    proc = dtc(OVERLAY, tmp_path / "o.dtbo")
    assert proc.returncode == 0
    assert proc.stderr == ""


def test_overlay_fits_the_duo256m_memory_map(tmp_path: Path) -> None:
    dtb = applied(tmp_path, OVERLAY.read_text())
    layout = ion_layout(dtb)
    assert layout.problems() == []
    assert (layout.start, layout.size) == (0x8B300000, 75 * MIB)


def test_overlay_wires_heap_and_tpu_to_the_base_tree(tmp_path: Path) -> None:
    dtb = applied(tmp_path, OVERLAY.read_text())
    assert fdtget(dtb, "/tpu@c100000", "compatible", "s") == ["cvitek,tpu"]
    ion_phandle = fdtget(dtb, "/reserved-memory/ion", "phandle")
    assert fdtget(dtb, "/cvitek-ion/heap_carveout", "memory-region") == ion_phandle
    assert fdtget(dtb, "/cvitek-ion/heap_carveout", "compatible", "s") == ["cvitek,carveout"]
    clk = fdtget(dtb, "/clock-controller", "phandle")[0]
    rst = fdtget(dtb, "/reset-controller", "phandle")[0]
    # CV181X_CLK_TPU 15, CV181X_CLK_TPU_FAB 16; RST_TDMA 7, RST_TPU 8, RST_TPUSYS 9.
    assert fdtget(dtb, "/tpu@c100000", "clocks") == [clk, "f", clk, "10"]
    assert fdtget(dtb, "/tpu@c100000", "resets") == [rst, "7", rst, "8", rst, "9"]
    # The driver takes the TDMA interrupt by index 1 (platform_get_irq(pdev, 1)).
    plic = fdtget(dtb, "/interrupt-controller@70000000", "phandle")[0]
    assert fdtget(dtb, "/tpu@c100000", "interrupt-parent") == [plic]
    assert fdtget(dtb, "/tpu@c100000", "interrupts", "u") == ["75", "4", "76", "4"]


def test_oversized_carveout_is_caught(tmp_path: Path) -> None:
    text = OVERLAY.read_text().replace("0x04b00000", "0x05000000")
    problems = ion_layout(applied(tmp_path, text)).problems()
    assert any("FreeRTOS" in p for p in problems)


def test_64mib_board_carveout_is_too_small_for_the_tpu_budget(tmp_path: Path) -> None:
    # The 26.8 MiB carveout of the 64 MiB Duo (cvi_board_memmap.h CVIMMAP_ION_SIZE 0x1acd000).
    text = OVERLAY.read_text().replace("0x8b300000 0x0 0x04b00000", "0x8e333000 0x0 0x01acd000")
    text = text.replace("size = <0x0 0x04b00000>", "size = <0x0 0x01acd000>")
    problems = ion_layout(applied(tmp_path, text)).problems()
    assert problems and "for the TPU" in problems[-1]


def test_overlay_without_the_base_labels_does_not_apply(tmp_path: Path) -> None:
    base_dts, base = tmp_path / "base.dts", tmp_path / "base.dtb"
    base_dts.write_text(BASE_DTS.replace("clk: clock-controller", "clock-controller"))
    assert dtc(base_dts, base).returncode == 0
    dtbo = tmp_path / "o.dtbo"
    assert dtc(OVERLAY, dtbo).returncode == 0
    proc = subprocess.run(["fdtoverlay", "-i", str(base), "-o", str(tmp_path / "x.dtb"), str(dtbo)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0


# ------------------------------------------------------------------ recipes

def recipe(rel: str) -> str:
    return (LAYER / rel).read_text()


def assignments(text: str, var: str) -> list[str]:
    return re.findall(rf'^{re.escape(var)}\s*\??=\s*"([^"]*)"', text, re.M)


SOPHGO_RECIPES = {
    "recipes-kernel/cvitek-tpu/cvitek-tpu_git.bb": "osdrv",
    "recipes-libs/cvikernel/cvikernel_git.bb": "cvikernel",
    "recipes-libs/cnpy/cnpy-cvitek_git.bb": "cnpy",
    "recipes-libs/cvimath/cvimath_git.bb": "cvimath",
    "recipes-devtools/cvibuilder/cvibuilder_git.bb": "cvibuilder",
    "recipes-libs/cviruntime/cviruntime.inc": "cviruntime",
}


@pytest.mark.parametrize("rel", sorted(SOPHGO_RECIPES))
def test_sources_are_pinned_upstream_commits(rel: str) -> None:
    text = recipe(rel)
    uri = assignments(text, "SRC_URI")[0]
    assert uri.startswith(f"git://github.com/sophgo/{SOPHGO_RECIPES[rel]}.git;protocol=https;branch=")
    assert re.fullmatch(r"[0-9a-f]{40}", assignments(text, "SRCREV")[0])
    assert "AUTOREV" not in text


@pytest.mark.parametrize("rel", sorted(SOPHGO_RECIPES))
def test_licence_is_stated_with_a_checksum(rel: str) -> None:
    text = recipe(rel)
    assert assignments(text, "LICENSE")
    assert re.search(r"LIC_FILES_CHKSUM = \"[^\"]*md5=[0-9a-f]{32}", text, re.S)


def test_unlicensed_sdk_parts_need_an_explicit_opt_in() -> None:
    for rel in ("recipes-libs/cvikernel/cvikernel_git.bb", "recipes-libs/cvimath/cvimath_git.bb",
                "recipes-devtools/cvibuilder/cvibuilder_git.bb", "recipes-libs/cviruntime/cviruntime.inc"):
        assert assignments(recipe(rel), "LICENSE_FLAGS") == ["sophgo-no-licence"], rel
    opt = yaml.safe_load((ROOT / "kas" / "opt" / "accept-sophgo-tpu-sdk.yml").read_text())
    assert "sophgo-no-licence" in opt["local_conf_header"]["accept-sophgo-tpu-sdk"]
    assert "sophgo-no-licence" not in KAS.read_text().split("local_conf_header")[1]


def test_tpu_module_recipe_builds_and_autoloads_the_three_modules() -> None:
    text = recipe("recipes-kernel/cvitek-tpu/cvitek-tpu_git.bb")
    assert re.search(r"^inherit module$", text, re.M)
    assert assignments(text, "CVI_TPU_DRIVERS") == ["sys base tpu"]
    assert "${CVI_CHIP}_sys ${CVI_CHIP}_base ${CVI_CHIP}_tpu" in text
    assert 'CVI_CHIP:milkv-duo256m = "cv181x"' in text
    assert assignments(text, "PACKAGE_ARCH") == ["${MACHINE_ARCH}"]
    assert re.match(assignments(text, "COMPATIBLE_MACHINE")[0], "milkv-duo256m")


def test_kas_kernel_is_the_one_the_driver_recipe_requires() -> None:
    config = yaml.safe_load(KAS.read_text())
    local_conf = "\n".join(config["local_conf_header"].values())
    wanted = assignments(recipe("recipes-kernel/cvitek-tpu/cvitek-tpu_git.bb"), "CVI_TPU_KERNEL")[0]
    assert f'PREFERRED_PROVIDER_virtual/kernel = "{wanted}"' in local_conf
    assert 'NPU_FAMILY = "cvitek-tpu"' in local_conf
    assert config["machine"] == "milkv-duo256m"


def test_kas_pins_every_repository() -> None:
    config = yaml.safe_load(KAS.read_text())
    for name, repo in config["repos"].items():
        assert re.fullmatch(r"[0-9a-f]{40}", repo["commit"]), name
        assert repo["branch"], name
    assert config["repos"]["meta-riscv"]["url"] == "https://github.com/riscv/meta-riscv"


def test_packagegroup_selects_the_cvitek_family() -> None:
    text = recipe("recipes-core/packagegroups/packagegroup-npu.bbappend")
    assert "cvitek-tpu" in assignments(text, "NPU_DRIVER_PKGS:npu-cvitek-tpu")[0]
    runtime = assignments(text, "NPU_RUNTIME_PKGS:npu-cvitek-tpu")[0].split()
    assert {"cviruntime", "cviruntime-tools"} <= set(runtime)
