# SPDX-License-Identifier: MIT
"""scripts/kernel-check: meta-npu's fragment, boot DTB and kernel options in a board's kernel tree.

In CI the trees are subsets laid out as the kernel lays them out: the board .dts over the minimal
SoC tree scripts/kernel-trees writes from recorded upstream values (tests/data/kernel-trees).
Each check has a twin that breaks it (the RK3588 BSP label, an SRAM overlap, a wrong entry).

Real trees: set NPU_KERNEL_SRC_<ENTRY> (e.g. NPU_KERNEL_SRC_RK3588_EVB=/path/to/linux) to a kernel
tree of that entry (a checkout at the pinned commit, BitBake's ${S}, or an assembled subset); the
real-tree tests then run kernel-check's whole check there and hold the tree's DTB against the
recorded upstream values. Without the variable they are skipped, saying so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from devicetree import RECORDS, record_mismatches
from loadscript import load_script

ROOT = Path(__file__).resolve().parents[1]
KERNEL_CHECK = ROOT / "scripts" / "kernel-check"
FRAGMENT_RK3588 = "meta-npu/dynamic-layers/rockchip/recipes-kernel/linux/files/rknpu-sram-rk3588.dtsi"
FRAGMENT_IMX95 = (
    "meta-npu/dynamic-layers/freescale-layer/recipes-kernel/linux/linux-imx/imx95-neutron-pool.dtsi"
)


def edited_fragment(tmp_path: Path, fragment: str, old: str, new: str) -> Path:
    """A copy of meta-npu's FRAGMENT (same file name) with OLD replaced by NEW."""
    copy = tmp_path / Path(fragment).name
    text = (ROOT / fragment).read_text()
    assert old in text, f"{fragment} no longer holds {old!r}; update the test"
    copy.write_text(text.replace(old, new))
    return copy


# entry -> (kas file, board .dts path in the tree, record of its SoC tree or None, record's root
# compatible for the stand-in board file: the profile's soc.compatible)
ENTRIES = {
    "RK3588_EVB": (
        "kas/rk3588-evb.yml",
        "rockchip/rk3588-evb1-lp4-v10-linux",
        "rk3588-bsp",
        "rockchip,rk3588",
    ),
    "RK3576_EVB": ("kas/rk3576-evb.yml", "rockchip/rk3576-evb1-v10-linux", "rk3576-bsp", "rockchip,rk3576"),
    "ROCK_5B": ("kas/rock-5b.yml", "rockchip/rk3588-rock-5b", None, "rockchip,rk3588"),
    "IMX95_VERDIN": ("kas/imx95-verdin.yml", "freescale/imx95-19x19-verdin", "imx95-evk", "fsl,imx95"),
    # NXP's scarthgap BSP: linux-imx 6.6.36 (nxp-imx/meta-imx 6bbf35e7 linux-imx_6.6.bb, d23d64ee).
    "IMX95_VERDIN_SCARTHGAP": (
        "kas/imx95-verdin-scarthgap.yml",
        "freescale/imx95-19x19-verdin",
        "imx95-evk",
        "fsl,imx95",
    ),
    "IMX95_VERDIN_COMMUNITY": (
        "kas/imx95-verdin-community.yml",
        "freescale/imx95-19x19-verdin",
        "imx95-evk",
        "fsl,imx95",
    ),
}


def kernel_check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(KERNEL_CHECK), *map(str, args)], text=True, capture_output=True, check=False
    )


def subset_tree(tmp: Path, entry: str, soc_text: str | None = None) -> Path:
    """A kernel tree subset: the board .dts over the generated minimal SoC tree."""
    _, board, record, compatible = ENTRIES[entry]
    tree = tmp / "linux"
    dts = tree / "arch" / "arm64" / "boot" / "dts" / f"{board}.dts"
    dts.parent.mkdir(parents=True)
    soc = f"{record}.dtsi"
    (dts.parent / soc).write_text(soc_text if soc_text is not None else (RECORDS / soc).read_text())
    dts.write_text(f'/dts-v1/;\n#include "{soc}"\n\n/ {{\n\tcompatible = "{compatible}";\n}};\n')
    return tree


@pytest.mark.parametrize("entry", ["RK3588_EVB", "RK3576_EVB", "IMX95_VERDIN_COMMUNITY"])
def test_fragment_compiles_in_the_subset_and_meets_the_profile(entry: str, tmp_path: Path) -> None:
    tree = subset_tree(tmp_path, entry)
    proc = kernel_check("--tree", tree, "--entry", ENTRIES[entry][0], "--skip-config")
    assert proc.returncode == 0, proc.stderr
    assert "the profile's requirements hold" in proc.stdout


def test_a_pool_smaller_than_the_profile_is_named(tmp_path: Path) -> None:
    """The i.MX95 profile wants a Neutron pool of at least memory.pool_min_bytes (128 MiB)."""
    tree = subset_tree(tmp_path, "IMX95_VERDIN_COMMUNITY")
    fragment = edited_fragment(
        tmp_path, FRAGMENT_IMX95, "size = <0x0 0x08000000>;", "size = <0x0 0x04000000>;"
    )
    proc = kernel_check(
        "--tree", tree, "--entry", "kas/imx95-verdin-community.yml", "--skip-config", "--fragment", fragment
    )
    assert proc.returncode == 1
    assert "neutron-pool is 0x4000000 bytes, the profile wants at least 0x8000000" in proc.stderr


def test_buildroot_fragment_selects_the_same_board(tmp_path: Path) -> None:
    tree = subset_tree(tmp_path, "RK3588_EVB")
    proc = kernel_check(
        "--tree",
        tree,
        "--buildroot-fragment",
        ROOT / "buildroot/board/rockchip/rk3588-evb/npu.config",
        "--skip-config",
    )
    assert proc.returncode == 0, proc.stderr


def test_mainline_label_in_a_bsp_tree_is_named(tmp_path: Path) -> None:
    """The bug of issue 25 the other way round: a tree that labels the SRAM system_sram2
    (mainline) while the fragment writes &syssram (BSP 6.1): kernel-check's sentence, not dtc's."""
    soc = (
        (RECORDS / "rk3588-bsp.dtsi")
        .read_text()
        .replace("syssram: sram@ff001000", "system_sram2: sram@ff001000")
    )
    tree = subset_tree(tmp_path, "RK3588_EVB", soc)
    proc = kernel_check("--tree", tree, "--entry", "kas/rk3588-evb.yml", "--skip-config")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        "rknpu-sram-rk3588.dtsi refers to label syssram, which "
        "rockchip/rk3588-evb1-lp4-v10-linux.dts and its "
        "includes do not define in this kernel tree: use the label this tree gives the node (e.g. syssram in "
        "Rockchip's BSP 6.1 rk3588s.dtsi, system_sram2 in mainline)."
    ]
    assert "Traceback" not in proc.stderr


def test_a_board_tree_broken_without_the_fragment_is_not_blamed_on_it(tmp_path: Path) -> None:
    """Seen in a board vendor's RK3576 BSP import (wuzbgit/rk3576-bsp 6d375c00): its rk3576-evb1
    tree refers to labels it cut (&es8388); kernel-check said the fragment did not compile."""
    tree = subset_tree(tmp_path, "RK3576_EVB")
    dts = next(tree.rglob("rk3576-evb1-v10-linux.dts"))
    dts.write_text(dts.read_text() + '\n&es8388 {\n\tstatus = "okay";\n};\n')
    proc = kernel_check("--tree", tree, "--entry", "kas/rk3576-evb.yml", "--skip-config")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith(
        f"rockchip/rk3576-evb1-v10-linux.dtb does not compile in {tree} even without rknpu-sram-rk3576.dtsi ("
    )
    assert "es8388" in lines[0] and lines[0].endswith(
        "the board tree itself is broken, not the fragment; "
        "give the kernel tree the board really builds, or fix its device tree."
    )


def test_in_place_a_broken_fragment_is_still_the_fragments_fault(tmp_path: Path) -> None:
    """With --in-place (BitBake's ${S}) the tree holds the fragment once applied: kernel-check must
    not compile that as the "untouched" board tree and blame the tree."""
    tree = subset_tree(tmp_path, "RK3588_EVB")
    old = edited_fragment(tmp_path, FRAGMENT_RK3588, "&syssram {", "&system_sram2 {")
    proc = kernel_check(
        "--tree", tree, "--entry", "kas/rk3588-evb.yml", "--skip-config", "--fragment", old, "--in-place"
    )
    assert proc.returncode == 1
    assert "even without" not in proc.stderr
    assert proc.stderr.startswith("rknpu-sram-rk3588.dtsi refers to label system_sram2")


def test_the_old_fragment_label_stops_with_kernel_checks_sentence(tmp_path: Path) -> None:
    """The fragment as it was before issue 25 (&system_sram2, mainline's label) against the BSP
    6.1 tree (syssram): one sentence naming the fragment, the label and the fix."""
    tree = subset_tree(tmp_path, "RK3588_EVB")
    old = edited_fragment(tmp_path, FRAGMENT_RK3588, "&syssram {", "&system_sram2 {")
    proc = kernel_check("--tree", tree, "--entry", "kas/rk3588-evb.yml", "--skip-config", "--fragment", old)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "rknpu-sram-rk3588.dtsi refers to label system_sram2, which rockchip/rk3588-evb1-lp4-v10-linux.dts "
        "and its includes do not define in this kernel tree: use the label this tree gives the node (e.g. "
        "syssram in Rockchip's BSP 6.1 rk3588s.dtsi, system_sram2 in mainline)."
    ]


def test_a_missing_neutron_label_is_named_with_nxps_label(tmp_path: Path) -> None:
    """Seen on NXP's real tree (nxp-imx/linux-imx imx95.dtsi 97bf30a8): a fragment whose label the
    tree lacks got the Rockchip hint. The i.MX95 sentence names NXP's label."""
    tree = subset_tree(tmp_path, "IMX95_VERDIN_COMMUNITY")
    bad = edited_fragment(tmp_path, FRAGMENT_IMX95, "&neutron {", "&npu {")
    proc = kernel_check(
        "--tree", tree, "--entry", "kas/imx95-verdin-community.yml", "--skip-config", "--fragment", bad
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "imx95-neutron-pool.dtsi refers to label npu, which freescale/imx95-19x19-verdin.dts and its "
        "includes do not define in this kernel tree: use the label this tree gives the node (e.g. neutron "
        "in NXP's imx95.dtsi)."
    ]


def test_an_sram_user_the_fragment_leaves_is_an_overlap(tmp_path: Path) -> None:
    soc = (RECORDS / "rk3588-bsp.dtsi").read_text()
    soc = soc.replace(
        "\t\trkvdec1_sram: rkvdec-sram@78000 {",
        "\t\tother_sram: other-sram@e0000 {\n\t\t\treg = <0xe0000 "
        "0xf000>;\n\t\t};\n\n\t\trkvdec1_sram: rkvdec-sram@78000 {",
    )
    tree = subset_tree(tmp_path, "RK3588_EVB", soc)
    proc = kernel_check("--tree", tree, "--entry", "kas/rk3588-evb.yml", "--skip-config")
    assert proc.returncode == 1
    assert "/sram@ff001000/other-sram@e0000 overlaps the NPU's SRAM" in proc.stderr


def test_a_tree_without_the_board_dts_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "linux").mkdir()
    proc = kernel_check("--tree", tmp_path / "linux", "--entry", "kas/rk3588-evb.yml", "--skip-config")
    assert proc.returncode == 2
    assert (
        proc.stderr.count("\n") == 1
        and "has no arch/arm64/boot/dts/rockchip/rk3588-evb1-lp4-v10-linux.dts" in proc.stderr
    )


def test_an_unknown_entry_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "x.yml"
    bad.write_text("header:\n  version: 23\nmachine: qemux86-64\n")
    proc = kernel_check("--tree", tmp_path, "--entry", bad)
    assert proc.returncode == 2
    assert "builds machine 'qemux86-64', which kernel-check does not know" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_tree_that_is_no_kernel_is_bad_input_for_the_config_step(tmp_path: Path) -> None:
    tree = subset_tree(tmp_path, "RK3588_EVB")
    proc = kernel_check("--tree", tree, "--entry", "kas/rk3588-evb.yml", "--skip-dtb")
    assert proc.returncode == 2
    assert "has no Makefile or scripts/kconfig/merge_config.sh" in proc.stderr


# --- a real kernel tree in CI: Debian's linux-source-6.12 -----------------------------------------

DEBIAN_SOURCE = Path(os.environ.get("NPU_DEBIAN_LINUX_SOURCE", "/usr/src/linux-source-6.12.tar.xz"))


@pytest.fixture(scope="module")
def debian_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not DEBIAN_SOURCE.is_file():
        pytest.fail(
            f"{DEBIAN_SOURCE} is not there: apt-get install linux-source-6.12 (.ci/apt-packages.txt)."
        )
    out = tmp_path_factory.mktemp("debian-linux")
    subprocess.run(["tar", "-xf", str(DEBIAN_SOURCE), "-C", str(out)], check=True)
    return next(out.iterdir())


def test_rocket_options_in_a_kernel_without_rocket_are_named(debian_tree: Path, tmp_path: Path) -> None:
    """Linux 6.12 (Debian's source) has no Rocket driver (drivers/accel/rocket came in 6.18): the
    ROCK 5B's rocket.cfg must fail there on that one option, and its other options survive."""
    proc = kernel_check(
        "--tree", debian_tree, "--entry", "kas/rock-5b.yml", "--skip-dtb", "--workdir", tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "rocket.cfg sets CONFIG_DRM_ACCEL_ROCKET=m, which no Kconfig of this tree "
        "defines: drop it or build the "
        "kernel that has it."
    ]


def test_rock5b_board_tree_of_a_real_kernel(debian_tree: Path, tmp_path: Path) -> None:
    """The ROCK 5B's board tree of Linux 6.12 builds with the kernel's own flags; it has no NPU
    node yet (the rknn cores came with Rocket), which kernel-check names."""
    proc = kernel_check(
        "--tree", debian_tree, "--entry", "kas/rock-5b.yml", "--skip-config", "--workdir", tmp_path
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "has no node compatible with rockchip,rk3588-rknn-core" in proc.stderr


# --- real trees of the entries ------------------------------------------------------------------


@pytest.mark.parametrize("entry", sorted(ENTRIES))
def test_real_tree(entry: str, tmp_path: Path) -> None:
    variable = f"NPU_KERNEL_SRC_{entry}"
    tree = os.environ.get(variable)
    if not tree:
        pytest.skip(
            f"{variable} is not set: point it at {ENTRIES[entry][0]}'s kernel tree to run this check there."
        )
    kas, board, record, _ = ENTRIES[entry]
    whole = (Path(tree) / "Makefile").is_file() and (Path(tree) / "scripts/kconfig/merge_config.sh").is_file()
    args = ["--tree", tree, "--entry", kas, "--workdir", tmp_path]
    proc = kernel_check(*args, *([] if whole else ["--skip-config"]))
    print(proc.stdout + proc.stderr)
    assert proc.returncode == 0, proc.stderr
    if record:
        problems = recorded_files_mismatches(
            Path(tree), json.loads((RECORDS / f"{record}.json").read_text()), tmp_path
        )
        assert problems == [], "\n".join(problems)


def recorded_files_mismatches(tree: Path, record: dict, work: Path) -> list[str]:
    """The record held against the upstream files it was read from, each compiled alone from TREE
    with the kernel's cpp and dtc flags (a .dtsi under a `/dts-v1/;` of its own): the values are
    the SoC file's, before a board file enables a node or meta-npu's fragment edits it."""
    kernel = load_script("kernel-check")
    problems: list[str] = []
    for name, source in record["files"].items():
        upstream = tree / source["path"]
        if not upstream.is_file():
            problems.append(f"{record['name']}: {source['path']} is recorded but not in {tree}.")
            continue
        dts = upstream
        if upstream.suffix == ".dtsi":  # a wrapper of its own in WORK: the tree is only read
            dts = work / f"{upstream.stem}-alone.dts"
            dts.write_text(f'/dts-v1/;\n#include "{upstream}"\n')
        error = kernel.cpp_dtc(tree, dts, out := work / f"{upstream.stem}-recorded.dtb", "arm64")
        if error:
            problems.append(f"{record['name']}: {source['path']} does not compile alone: {error}")
            continue
        mine = {**record, "nodes": [n for n in record["nodes"] if n["file"] == name]}
        problems += record_mismatches(out, mine)
    return problems


def test_real_tree_tests_skip_with_the_variable_named() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NPU_KERNEL_SRC_")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", __file__, "-k", "test_real_tree and ROCK_5B"],
        text=True,
        capture_output=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert "NPU_KERNEL_SRC_ROCK_5B is not set" in proc.stdout
    assert shutil.which("dtc")


def test_the_builds_config_mode_passes_a_config_with_every_option(tmp_path: Path) -> None:
    """What do_npu_kernel_check and the Buildroot hook run: --machine and the build's .config."""
    tree = subset_tree(tmp_path, "RK3588_EVB")
    cfg = ROOT / "meta-npu/dynamic-layers/rockchip/recipes-kernel/linux/files/rknpu.cfg"
    config = tmp_path / ".config"
    config.write_text(cfg.read_text())
    proc = kernel_check("--tree", tree, "--machine", "rockchip-rk3588-evb", "--config", config)
    assert proc.returncode == 0, proc.stderr
    assert "every option of rknpu.cfg is set" in proc.stdout


def test_the_builds_config_mode_names_a_dropped_option(tmp_path: Path) -> None:
    tree = subset_tree(tmp_path, "RK3588_EVB")
    cfg = ROOT / "meta-npu/dynamic-layers/rockchip/recipes-kernel/linux/files/rknpu.cfg"
    config = tmp_path / ".config"
    config.write_text(
        cfg.read_text().replace("CONFIG_ROCKCHIP_RKNPU_SRAM=y", "# CONFIG_ROCKCHIP_RKNPU_SRAM is not set")
    )
    proc = kernel_check("--tree", tree, "--machine", "rockchip-rk3588-evb", "--config", config, "--skip-dtb")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "rknpu.cfg sets CONFIG_ROCKCHIP_RKNPU_SRAM=y, which no Kconfig of this tree "
        "defines: drop it or build "
        "the kernel that has it."
    ]


def test_a_config_problem_is_kept_when_the_device_tree_step_is_bad_input(tmp_path: Path) -> None:
    """Both causes at once: the dropped option, then the missing board tree (exit 2)."""
    tree = subset_tree(tmp_path, "RK3588_EVB")
    next(tree.rglob("rk3588-evb1-lp4-v10-linux.dts")).unlink()
    cfg = ROOT / "meta-npu/dynamic-layers/rockchip/recipes-kernel/linux/files/rknpu.cfg"
    config = tmp_path / ".config"
    config.write_text(
        cfg.read_text().replace("CONFIG_ROCKCHIP_RKNPU_SRAM=y", "# CONFIG_ROCKCHIP_RKNPU_SRAM is not set")
    )
    proc = kernel_check("--tree", tree, "--machine", "rockchip-rk3588-evb", "--config", config)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and "CONFIG_ROCKCHIP_RKNPU_SRAM=y" in lines[0]
    assert lines[1].startswith(f"{tree} has no arch/arm64/boot/dts/rockchip/rk3588-evb1-lp4-v10-linux.dts")


def test_an_unknown_machine_is_bad_input(tmp_path: Path) -> None:
    proc = kernel_check("--tree", tmp_path, "--machine", "qemuarm64", "--skip-config")
    assert proc.returncode == 2
    assert "machine 'qemuarm64' is not one kernel-check knows" in proc.stderr
