# SPDX-License-Identifier: MIT
"""The CV18xx part of the layer: the Duo 256M board tree and its memory-map check, the kernel
configuration, kernel-module and runtime recipes, the kas entry.

The board tree (sg2002-milkv-duo256m-npu.dts) #includes the SG2002 SoC trees of Milk-V's SDK,
which only the kernel build fetches. Here it is preprocessed and compiled as the kernel's dtbs
rule does (cpp -nostdinc -undef -D__DTS__ -x assembler-with-cpp, then dtc), against a stand-in SoC
tree of our own that has what the board tree relies on, with the same node names and labels as
the SDK's: the /tpu node, the "cvitek,cvitek-ion" heap pointing at &ion_reserved, the eMMC and
SPI-NAND controllers the SD-boot tree deletes, and the #include of cvi_board_memmap.h. The
compiled tree is then checked by the layer's own cvi-memmap-check (the script the kernel recipe
runs at build time) against a memory-map header with the Duo 256M values. Every rule has a
faulty case.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from boardtrees import MEMMAP_H, SD_STUB, SOC_STUB, TPU_NODE

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "meta-npu" / "dynamic-layers" / "riscv-layer"
KERNEL = LAYER / "recipes-kernel" / "linux"
FILES = KERNEL / "files"
BOARD_DTS = FILES / "sg2002-milkv-duo256m-npu.dts"
FRAGMENT = FILES / "sg2002-milkv-duo256m-tpu-ion.dtsi"
MEMMAP_CHECK = FILES / "cvi-memmap-check"
KERNEL_CFG = FILES / "cv181x.cfg"
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


def tool(name: str, package: str) -> str:
    exe = shutil.which(name)
    assert exe, f"{name} is missing: apt-get install {package} (.ci/apt-packages.txt)"
    return exe


def dtc(source: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            tool("dtc", "device-tree-compiler"),
            "-@",
            *extra,
            "-I",
            "dts",
            "-O",
            "dtb",
            "-o",
            str(out),
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def fdtget(dtb: Path, node: str, prop: str, kind: str = "x") -> list[str]:
    proc = subprocess.run(
        ["fdtget", f"-t{kind}", str(dtb), node, prop], capture_output=True, text=True, check=True
    )
    return proc.stdout.split()


@dataclass
class BoardBuild:
    """The board tree as the kernel builds it: a kernel-like dts directory, cpp, dtc."""

    tmp: Path
    soc: str = SOC_STUB.replace("TPU_NODE", TPU_NODE)
    fragment: str = FRAGMENT.read_text()
    header: str = MEMMAP_H

    def compile(self) -> tuple[subprocess.CompletedProcess[str], Path]:
        dts = self.tmp / "dts"
        sub = dts / "sg2002"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / "cv181x_base_riscv.dtsi").write_text(self.soc)
        (sub / "cv181x_asic_qfn.dtsi").write_text("")
        (sub / "cv181x_asic_sd.dtsi").write_text(SD_STUB)
        (sub / "cvi_board_memmap.h").write_text(self.header)
        (dts / FRAGMENT.name).write_text(self.fragment)
        shutil.copy(BOARD_DTS, dts / BOARD_DTS.name)
        pre = self.tmp / "board.dts.tmp"
        # As scripts/Makefile.lib's dtc_cpp_flags: quoted includes resolve from each file's own
        # directory (sg2002/ for the SoC trees, so they find the board's cvi_board_memmap.h).
        cpp = subprocess.run(
            [
                tool("cpp", "cpp"),
                "-nostdinc",
                "-undef",
                "-D__DTS__",
                "-x",
                "assembler-with-cpp",
                "-o",
                str(pre),
                str(dts / BOARD_DTS.name),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        dtb = self.tmp / "board.dtb"
        if cpp.returncode != 0:
            return cpp, dtb
        return dtc(pre, dtb, "-Wno-unit_address_vs_reg"), dtb


def built(tmp: Path, **kwargs: str) -> Path:
    proc, dtb = BoardBuild(tmp, **kwargs).compile()
    assert proc.returncode == 0, proc.stderr
    return dtb


def memmap_check(dtb: Path, header: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(MEMMAP_CHECK), str(dtb), str(header)],
        capture_output=True,
        text=True,
        check=False,
    )


def header_file(tmp: Path, text: str = MEMMAP_H) -> Path:
    path = tmp / "cvi_board_memmap.h"
    path.write_text(text)
    return path


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
            out.append(
                f"ION [{self.start:#x}, {self.start + self.size:#x}) leaves DRAM below the "
                f"FreeRTOS area at {freertos:#x}"
            )
        if self.limit != self.size:
            out.append(f"alloc-ranges length {self.limit:#x} differs from size {self.size:#x}")
        if self.size - CAMERA_ION < TPU_ION_MIN:
            out.append(f"ION {self.size // MIB} MiB leaves under {TPU_ION_MIN // MIB} MiB for the TPU")
        return out


def ion_layout(dtb: Path) -> IonLayout:
    size = [int(v, 16) for v in fdtget(dtb, "/reserved-memory/ion", "size")]
    ranges = [int(v, 16) for v in fdtget(dtb, "/reserved-memory/ion", "alloc-ranges")]
    return IonLayout(
        start=(ranges[0] << 32) | ranges[1],
        size=(size[0] << 32) | size[1],
        limit=(ranges[2] << 32) | ranges[3],
    )


# ------------------------------------------------------------------ board tree


def test_board_tree_compiles_and_agrees_with_the_memory_map(tmp_path: Path) -> None:
    dtb = built(tmp_path)
    proc = memmap_check(dtb, header_file(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    layout = ion_layout(dtb)
    assert layout.problems() == []
    assert (layout.start, layout.size) == (0x8B300000, 75 * MIB)
    assert fdtget(dtb, "/memory@80000000", "reg") == ["0", "80000000", "0", "fe00000"]
    assert fdtget(dtb, "/", "model", "s") == ["Milk-V", "Duo256M"]


def test_board_tree_wires_the_heap_to_the_carveout_and_keeps_one_tpu(tmp_path: Path) -> None:
    dtb = built(tmp_path)
    ion = fdtget(dtb, "/reserved-memory/ion", "phandle")
    assert fdtget(dtb, "/cvitek-ion/heap_carveout@0", "memory-region") == ion
    assert fdtget(dtb, "/tpu", "status", "s") == ["okay"]
    assert fdtget(dtb, "/tpu", "compatible", "s") == ["cvitek,tpu"]
    nodes = subprocess.run(
        ["fdtget", "-l", str(dtb), "/"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert [n for n in nodes if n.startswith("tpu")] == ["tpu"]
    # SD-card boot: the controllers the board does not have are gone.
    assert "cv-emmc@4300000" not in nodes and "cv-spinf@4060000" not in nodes
    # The FreeRTOS node the ION heap reads its reserved share from, at the top 2 MiB.
    assert fdtget(dtb, "/fast_image@8fe00000", "ion-size") == ["1600000"]


def test_fragment_refuses_a_soc_tree_without_the_tpu_node(tmp_path: Path) -> None:
    proc, _ = BoardBuild(tmp_path, soc=SOC_STUB.replace("TPU_NODE", "")).compile()
    assert proc.returncode != 0
    assert "/tpu" in proc.stderr


def test_board_tree_without_the_ion_label_does_not_compile(tmp_path: Path) -> None:
    fragment = FRAGMENT.read_text().replace("ion_reserved: ion", "ion")
    proc, _ = BoardBuild(tmp_path, fragment=fragment).compile()
    assert proc.returncode != 0
    assert "ion_reserved" in proc.stderr


def test_oversized_carveout_is_caught(tmp_path: Path) -> None:
    fragment = FRAGMENT.read_text().replace("0x04b00000", "0x05000000")
    dtb = built(tmp_path, fragment=fragment)
    assert any("FreeRTOS" in p for p in ion_layout(dtb).problems())
    proc = memmap_check(dtb, header_file(tmp_path))
    assert proc.returncode == 1
    assert "ION carveout must be 0x4b00000 bytes at 0x8b300000" in proc.stderr


def test_64mib_board_carveout_is_too_small_for_the_tpu_budget(tmp_path: Path) -> None:
    # The 26.8 MiB carveout of the 64 MiB Duo (cvi_board_memmap.h CVIMMAP_ION_SIZE 0x1acd000).
    fragment = FRAGMENT.read_text().replace("0x8b300000 0x0 0x04b00000", "0x8e333000 0x0 0x01acd000")
    fragment = fragment.replace("size = <0x0 0x04b00000>", "size = <0x0 0x01acd000>")
    problems = ion_layout(built(tmp_path, fragment=fragment)).problems()
    assert problems and "for the TPU" in problems[-1]


# ------------------------------------------------------------------ cvi-memmap-check


def test_memmap_check_fails_when_uboot_moved_the_carveout(tmp_path: Path) -> None:
    dtb = built(tmp_path)
    moved = MEMMAP_H.replace("CVIMMAP_ION_ADDR 0x8b300000", "CVIMMAP_ION_ADDR 0x8a300000")
    proc = memmap_check(dtb, header_file(tmp_path, moved))
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "ION carveout" in lines[0]


def test_memmap_check_fails_on_kernel_memory_and_freertos_drift(tmp_path: Path) -> None:
    dtb = built(tmp_path)
    drift = MEMMAP_H.replace("CVIMMAP_KERNEL_MEMORY_SIZE 0xfe00000", "CVIMMAP_KERNEL_MEMORY_SIZE 0xfc00000")
    drift = drift.replace(
        "CVIMMAP_FREERTOS_RESERVED_ION_SIZE 0x1600000", "CVIMMAP_FREERTOS_RESERVED_ION_SIZE 0x1400000"
    )
    proc = memmap_check(dtb, header_file(tmp_path, drift))
    assert proc.returncode == 1
    assert "memory node must be reg = <0x80000000 0xfc00000>" in proc.stderr
    assert "ion-size must be 0x1400000" in proc.stderr


def test_memmap_check_fails_without_a_tpu_node(tmp_path: Path) -> None:
    src = tmp_path / "no-tpu.dts"
    src.write_text(
        "/dts-v1/;\n/ {\n\t#address-cells = <2>;\n\t#size-cells = <2>;\n"
        '\tmemory@80000000 {\n\t\tdevice_type = "memory";\n'
        "\t\treg = <0x0 0x80000000 0x0 0x0fe00000>;\n\t};\n};\n"
    )
    dtb = tmp_path / "no-tpu.dtb"
    assert dtc(src, dtb).returncode == 0
    proc = memmap_check(dtb, header_file(tmp_path))
    assert proc.returncode == 1
    assert '"cvitek,tpu"' in proc.stderr and "/reserved-memory/ion" in proc.stderr


@pytest.mark.parametrize("case", ["missing-dtb", "not-a-dtb", "empty-header", "missing-header"])
def test_memmap_check_bad_input_is_one_sentence_and_exit_2(case: str, tmp_path: Path) -> None:
    dtb, header = built(tmp_path), header_file(tmp_path)
    if case == "missing-dtb":
        dtb = tmp_path / "nope.dtb"
    elif case == "not-a-dtb":
        dtb = tmp_path / "text.dtb"
        dtb.write_text("not a device tree\n")
    elif case == "empty-header":
        header.write_text("/* nothing */\n")
    else:
        header = tmp_path / "absent.h"
    proc = memmap_check(dtb, header)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cvi-memmap-check: ")
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ kernel recipe


def kconfig(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        if m := re.fullmatch(r"(CONFIG_\w+)=(.*)", line):
            out[m.group(1)] = m.group(2)
        elif m := re.fullmatch(r"# (CONFIG_\w+) is not set", line):
            out[m.group(1)] = "n"
    return out


def test_kernel_fragment_selects_the_cv181x_soc() -> None:
    cfg = kconfig(KERNEL_CFG.read_text())
    assert cfg["CONFIG_ARCH_CV181X"] == "y" and cfg["CONFIG_ARCH_CV180X"] == "n"
    assert cfg["CONFIG_ARCH_CV181X_ASIC"] == "y"
    # pinctrl-$(CONFIG_ARCH_CVITEK_CHIP).o and the TPU modules' CVIARCH must name the same chip.
    chip = cfg["CONFIG_ARCH_CVITEK_CHIP"].strip('"')
    assert f'CVI_CHIP:milkv-duo256m = "{chip}"' in recipe("recipes-kernel/cvitek-tpu/cvitek-tpu_git.bb")


def test_kernel_append_builds_the_board_tree_and_checks_it() -> None:
    inc = (KERNEL / "linux-milkv-duo-dev-npu.inc").read_text()
    dtb = assignments(inc, "KERNEL_DEVICETREE:milkv-duo256m")[0]
    assert dtb == f"cvitek/{BOARD_DTS.stem}.dtb"
    for name in re.findall(r"file://([\w.-]+)", inc):
        assert (FILES / name).is_file(), name
    for path in (BOARD_DTS, FRAGMENT, KERNEL_CFG, MEMMAP_CHECK):
        assert f"file://{path.name}" in inc
    assert re.fullmatch(r"[0-9a-f]{40}", assignments(inc, "NPU_CVI_SDK_SRCREV")[0])
    assert "cvi-memmap-check" in inc.split("do_compile:append:milkv-duo256m")[1]
    # Only when the NPU is asked for.
    append = (KERNEL / "linux-milkv-duo-dev.bbappend").read_text()
    assert "NPU_ENABLED" in append and "linux-milkv-duo-dev-npu.inc" in append


def test_the_memory_map_reaches_the_kernel_through_the_sysroot_not_the_deploy_dir() -> None:
    inc = (KERNEL / "linux-milkv-duo-dev-npu.inc").read_text()
    # Outside the task hash, a deployed header would not rebuild the kernel when the map changes.
    assert "DEPLOY_DIR_IMAGE" not in inc and "do_deploy" not in inc.split("# cv181x_base_riscv")[1]
    assert 'DEPENDS:append:milkv-duo256m = " virtual/bootloader"' in inc
    assert "${STAGING_DATADIR}/cvi-board-memmap/cvi_board_memmap.h" in inc
    staging = (LAYER / "recipes-bsp" / "u-boot" / "u-boot-cvi-memmap.inc").read_text()
    assert 'SYSROOT_PREPROCESS_FUNCS:append:milkv-duo256m = " npu_stage_cvi_memmap"' in staging
    assert "${SYSROOT_DESTDIR}${datadir}/cvi-board-memmap/" in staging
    append = (LAYER / "recipes-bsp" / "u-boot" / "u-boot_%.bbappend").read_text()
    assert "NPU_ENABLED" in append and "'cvitek-tpu'" in append


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
    for rel in (
        "recipes-libs/cvikernel/cvikernel_git.bb",
        "recipes-libs/cvimath/cvimath_git.bb",
        "recipes-devtools/cvibuilder/cvibuilder_git.bb",
        "recipes-libs/cviruntime/cviruntime.inc",
    ):
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
