# SPDX-License-Identifier: MIT
"""Rockchip layer parts: NPU SRAM device-tree fragments, the runtime/server version gate, recipe facts.

The SRAM fragments are compiled the way the kernel build compiles them (cpp, then dtc) against a
model of the BSP's SRAM users, written from the Rockchip BSP 6.1 device trees (rk3588s.dtsi:
system_sram2 at 0xff001000 handed to rkvdec0/rkvdec1; rk3576.dtsi: sram at 0x3ff88000 handed to
rkvdec). The checks read the compiled blob back with fdtget: the NPU's region must be 4 KB
aligned, no bigger than the SoC's maximum, inside its SRAM, and overlap no other SRAM user.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from boardtrees import RK3576_SOC, RK3588_SOC
from devicetree import (
    DeviceTreeError,
    apply_dts_include,
    cells,
    compile_dts,
    fdtget,
    properties,
    run,
    tool,
    walk,
)

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "meta-npu" / "dynamic-layers" / "rockchip"
KERNEL = LAYER / "recipes-kernel" / "linux"
ROCKET_KERNEL = ROOT / "meta-npu" / "recipes-kernel" / "linux"
RKNPU2 = ROOT / "meta-npu" / "recipes-runtime" / "rknpu2"
DEMOS = LAYER / "recipes-npu" / "rknn-demos"
VERSION_CHECK = RKNPU2 / "files" / "rknn-version-check.sh"

PAGE = 0x1000


@dataclass(frozen=True)
class Soc:
    name: str
    soc_dtsi: str
    board_dtb: str  # KERNEL_DEVICETREE of the JeffyCN machine
    npu_path: str
    sram_path: str
    max_bytes: int  # RKNN SDK v2.3.2 user guide §5.7: what the SoC can give to IP blocks
    expected_bytes: int  # what the fragment gives the NPU

    @property
    def fragment(self) -> Path:
        return KERNEL / "files" / f"rknpu-sram-{self.name}.dtsi"


SOCS = {
    "rk3588": Soc(
        "rk3588",
        RK3588_SOC,
        "rockchip/rk3588-evb1-lp4-v10-linux.dtb",
        "/npu@fdab0000",
        "/sram@ff001000",
        956 * 1024,
        0xEF000,
    ),
    "rk3576": Soc(
        "rk3576",
        RK3576_SOC,
        "rockchip/rk3576-evb1-v10-linux.dtb",
        "/npu@27700000",
        "/sram@3ff88000",
        480 * 1024,
        0x78000,
    ),
}


@dataclass(frozen=True)
class Region:
    path: str
    start: int
    size: int

    @property
    def end(self) -> int:
        return self.start + self.size


class SramError(DeviceTreeError):
    """A fragment that breaks an SRAM rule; the message names the rule and the fix."""


def apply_sram_include(
    kernel_tree: Path, unpackdir: Path, soc: Soc, devicetrees: str
) -> subprocess.CompletedProcess[str]:
    """Run npu-devicetree.bbclass's include step with what linux-rockchip-rknpu.inc gives it."""
    return apply_dts_include(kernel_tree, unpackdir, soc.fragment.name, devicetrees)


def make_kernel_tree(tmp: Path, soc: Soc, fragment_text: str | None = None) -> tuple[Path, Path]:
    """A kernel tree holding the SoC's SRAM users and the board .dts; an unpack dir with the fragment."""
    tree, unpack = tmp / "linux", tmp / "sources"
    dts_dir = tree / "arch" / "arm64" / "boot" / "dts" / "rockchip"
    dts_dir.mkdir(parents=True)
    unpack.mkdir()
    (dts_dir / f"{soc.name}-soc.dtsi").write_text(soc.soc_dtsi)
    board = tree / "arch" / "arm64" / "boot" / "dts" / soc.board_dtb.replace(".dtb", ".dts")
    board.write_text(f'/dts-v1/;\n#include "{soc.name}-soc.dtsi"\n\n/ {{\n\tmodel = "{soc.name} EVB";\n}};\n')
    text = soc.fragment.read_text() if fragment_text is None else fragment_text
    (unpack / soc.fragment.name).write_text(text)
    return tree, unpack


def compile_board(tree: Path, soc: Soc, out: Path) -> Path:
    """cpp + dtc, as the kernel's dtc_cpp rule does; fails the test with dtc's own message."""
    return compile_dts(tree / "arch" / "arm64" / "boot" / "dts" / soc.board_dtb.replace(".dtb", ".dts"), out)


# --- reading the blob back ------------------------------------------------------------------


def sram_regions(dtb: Path, sram: str) -> list[Region]:
    """Every SRAM range declared under the mmio-sram node SRAM, in absolute addresses."""
    base = cells(dtb, sram, "ranges")[2]
    regions = []
    for child in fdtget(dtb, "-l", sram).split():
        offset, size = cells(dtb, f"{sram}/{child}", "reg")
        regions.append(Region(f"{sram}/{child}", base + offset, size))
    return regions


def check_npu_sram(dtb: Path, soc: Soc) -> Region:
    """The NPU's SRAM region, after checking every rule; raises SramError naming the broken one."""
    if "rockchip,sram" not in properties(dtb, soc.npu_path):
        raise SramError(
            f"{soc.npu_path} has no rockchip,sram: attach the region with rockchip,sram = <&rknpu_sram>."
        )
    phandle = cells(dtb, soc.npu_path, "rockchip,sram")[0]
    regions = sram_regions(dtb, soc.sram_path)
    by_phandle = {
        cells(dtb, r.path, "phandle")[0]: r for r in regions if "phandle" in properties(dtb, r.path)
    }
    npu = by_phandle.get(phandle)
    if npu is None:
        raise SramError(
            f"rockchip,sram of {soc.npu_path} does not point into {soc.sram_path}: "
            "declare rknpu_sram as a child of the SoC's mmio-sram node."
        )
    sram_start = cells(dtb, soc.sram_path, "reg")[1]
    sram_size = cells(dtb, soc.sram_path, "reg")[3]
    if npu.start % PAGE or npu.size % PAGE:
        raise SramError(
            f"{npu.path} [{npu.start:#x}, {npu.end:#x}) is not 4 KB aligned: start and "
            "size must be multiples of 0x1000."
        )
    if npu.size > soc.max_bytes:
        raise SramError(
            f"{npu.path} is {npu.size:#x} bytes, more than the {soc.max_bytes:#x} that "
            f"{soc.name.upper()} can give the NPU: shrink it."
        )
    if npu.start < sram_start or npu.end > sram_start + sram_size:
        raise SramError(f"{npu.path} lies outside {soc.sram_path}: keep it inside the SRAM's reg.")
    for other in regions:
        if other is not npu and other.start < npu.end and npu.start < other.end:
            raise SramError(
                f"{npu.path} overlaps {other.path} [{other.start:#x}, {other.end:#x}): "
                "remove that user (and its rockchip,sram reference) or split the SRAM."
            )
    users = [p for p in walk(dtb) if p != soc.npu_path and "rockchip,sram" in properties(dtb, p)]
    for user in users:
        target = by_phandle.get(cells(dtb, user, "rockchip,sram")[0])
        if target is npu:
            raise SramError(f"{user} uses the NPU's SRAM too: only the NPU may reference rknpu_sram.")
    return npu


# --- SRAM fragments: pass -------------------------------------------------------------------


@pytest.mark.parametrize("soc", SOCS.values(), ids=lambda s: s.name)
def test_fragment_gives_the_npu_its_sram_on_the_bsp_tree(soc: Soc, tmp_path: Path) -> None:
    tree, unpack = make_kernel_tree(tmp_path, soc)
    proc = apply_sram_include(tree, unpack, soc, soc.board_dtb)
    assert proc.returncode == 0, proc.stderr
    npu = check_npu_sram(compile_board(tree, soc, tmp_path / "board.dtb"), soc)
    assert npu.size == soc.expected_bytes
    assert npu.start == cells(compile_board(tree, soc, tmp_path / "again.dtb"), soc.sram_path, "reg")[1]


@pytest.mark.parametrize("soc", SOCS.values(), ids=lambda s: s.name)
def test_include_is_added_once_even_when_do_patch_runs_twice(soc: Soc, tmp_path: Path) -> None:
    tree, unpack = make_kernel_tree(tmp_path, soc)
    for _ in range(2):
        assert apply_sram_include(tree, unpack, soc, soc.board_dtb).returncode == 0
    board = tree / "arch" / "arm64" / "boot" / "dts" / soc.board_dtb.replace(".dtb", ".dts")
    assert board.read_text().count(f'#include "{soc.fragment.name}"') == 1


@pytest.mark.parametrize("soc", SOCS.values(), ids=lambda s: s.name)
def test_fragment_sizes_match_the_sdk_guide(soc: Soc) -> None:
    reg = re.search(r"rknpu_sram: rknpu-sram@0 \{\s*reg = <0x0 (0x[0-9a-f]+)>;", soc.fragment.read_text())
    assert reg and int(reg.group(1), 16) == soc.expected_bytes


# --- SRAM fragments: each rule fails when broken ----------------------------------------------


def broken(soc: Soc, old: str, new: str) -> str:
    text = soc.fragment.read_text()
    assert old in text, f"{soc.fragment.name} no longer contains {old!r}"
    return text.replace(old, new)


@pytest.mark.parametrize(
    ("soc", "old", "new", "message"),
    [
        (
            SOCS["rk3588"],
            "\t/delete-node/ rkvdec-sram@78000;\n",
            "",
            "overlaps /sram@ff001000/rkvdec-sram@78000",
        ),
        (SOCS["rk3576"], "\t/delete-node/ rkvdec-sram@0;\n", "", "remove that user"),
        (SOCS["rk3588"], "reg = <0x0 0xef000>;", "reg = <0x0 0xef800>;", "not 4 KB aligned"),
        (SOCS["rk3588"], "reg = <0x0 0xef000>;", "reg = <0x0 0xf0000>;", "more than the 0xef000"),
        (SOCS["rk3576"], "reg = <0x0 0x78000>;", "reg = <0x0 0x79000>;", "more than the 0x78000"),
        (SOCS["rk3576"], "reg = <0x0 0x78000>;", "reg = <0x1000 0x77800>;", "not 4 KB aligned"),
        (SOCS["rk3588"], "\trockchip,sram = <&rknpu_sram>;\n", "", "has no rockchip,sram"),
    ],
    ids=[
        "rk3588-overlap",
        "rk3576-overlap",
        "rk3588-unaligned",
        "rk3588-too-big",
        "rk3576-too-big",
        "rk3576-unaligned",
        "rk3588-unattached",
    ],
)
def test_broken_fragment_is_rejected(soc: Soc, old: str, new: str, message: str, tmp_path: Path) -> None:
    tree, unpack = make_kernel_tree(tmp_path, soc, broken(soc, old, new))
    assert apply_sram_include(tree, unpack, soc, soc.board_dtb).returncode == 0
    dtb = compile_board(tree, soc, tmp_path / "board.dtb")
    with pytest.raises(SramError, match=re.escape(message)):
        check_npu_sram(dtb, soc)


def test_region_shared_with_a_decoder_is_rejected(tmp_path: Path) -> None:
    soc = SOCS["rk3576"]
    text = soc.fragment.read_text() + "\n&rkvdec {\n\trockchip,sram = <&rknpu_sram>;\n};\n"
    tree, unpack = make_kernel_tree(tmp_path, soc, text)
    assert apply_sram_include(tree, unpack, soc, soc.board_dtb).returncode == 0
    with pytest.raises(SramError, match="uses the NPU's SRAM too"):
        check_npu_sram(compile_board(tree, soc, tmp_path / "board.dtb"), soc)


def test_fragment_with_a_label_the_tree_lacks_does_not_compile(tmp_path: Path) -> None:
    soc = SOCS["rk3588"]
    tree, unpack = make_kernel_tree(tmp_path, soc, broken(soc, "&rkvdec1 {", "&rkvdec9 {"))
    assert apply_sram_include(tree, unpack, soc, soc.board_dtb).returncode == 0
    with pytest.raises(DeviceTreeError, match="dtc failed"):
        compile_board(tree, soc, tmp_path / "board.dtb")


def test_board_dts_missing_stops_the_build_with_one_sentence(tmp_path: Path) -> None:
    soc = SOCS["rk3588"]
    tree, unpack = make_kernel_tree(tmp_path, soc)
    proc = apply_sram_include(tree, unpack, soc, "rockchip/rk3588-nonexistent.dtb")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"ERROR: NPU_BOOT_DTB names rockchip/rk3588-nonexistent.dtb but {tree}/arch/arm64/boot/"
        "dts/rockchip/rk3588-nonexistent.dts does not exist: set NPU_BOOT_DTB to a board .dtb "
        "of this kernel."
    ]


@pytest.mark.parametrize("soc", SOCS.values(), ids=lambda s: s.name)
def test_the_buildroot_board_tree_gives_the_npu_the_same_sram(soc: Soc, tmp_path: Path) -> None:
    """The Buildroot board trees (rk3588-evb/rk3588-evb1-lp4-v10-linux.dts,
    rk3576-evb/rk3576-evb1-v10-linux.dts) include the BSP board tree and this layer's fragment,
    the one source of both builds."""
    board = Path(soc.board_dtb).with_suffix(".dts").name
    buildroot_tree = ROOT / "buildroot" / "board" / "rockchip" / board.split("1-")[0] / board
    dts = tmp_path / "dts"
    (dts / "rockchip").mkdir(parents=True)
    (dts / "rockchip" / f"{soc.name}-soc.dtsi").write_text(soc.soc_dtsi)
    (dts / "rockchip" / board).write_text(f'/dts-v1/;\n#include "{soc.name}-soc.dtsi"\n')
    (dts / soc.fragment.name).write_text(soc.fragment.read_text())
    (dts / board).write_text(buildroot_tree.read_text())
    npu = check_npu_sram(compile_dts(dts / board, tmp_path / "board.dtb"), soc)
    assert npu.size == soc.expected_bytes


# --- server and runtime versions --------------------------------------------------------------


def fake_binary(path: Path, *strings: str) -> Path:
    path.write_bytes(b"\x7fELF\x02\x01\x01\x00" + b"\x00".join(s.encode() for s in strings) + b"\x00")
    return path


def version_check(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return run("sh", VERSION_CHECK, *args)


@pytest.fixture
def server(tmp_path: Path) -> Path:
    # The strings the real rknn_server 2.3.2 (aarch64) carries, including its own
    # `strings | grep "librknnrt version" | awk` command line, which is not a version.
    return fake_binary(
        tmp_path / "rknn_server",
        "strings %s|grep \"librknnrt version\"|awk -F 'version: ' '{print $2}'",
        "rknn_server version: 2.3.2 (1842325 build@2025-03-30T09:54:34)",
    )


def test_matching_server_and_runtime_pass(server: Path, tmp_path: Path) -> None:
    runtime = fake_binary(tmp_path / "librknnrt.so", "librknnrt version: 2.3.2 (c6c5c8f8b@2025-03-30)")
    proc = version_check("--server", server, "--runtime", runtime, "--expect", "2.3.2")
    assert proc.returncode == 0, proc.stderr
    assert "librknnrt 2.3.2" in proc.stdout and "rknn_server 2.3.2" in proc.stdout


def test_runtime_of_another_release_fails_the_build(server: Path, tmp_path: Path) -> None:
    runtime = fake_binary(tmp_path / "librknnrt.so", "librknnrt version: 2.3.0 (c6c5c8f8b@2024-11-07)")
    proc = version_check("--server", server, "--runtime", runtime, "--expect", "2.3.2")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"rknn-version-check: {runtime} is librknnrt 2.3.0 but 2.3.2 is expected: take the server "
        "and the runtime from the same RKNN SDK release."
    ]


def test_server_of_another_release_fails_the_build(tmp_path: Path) -> None:
    server = fake_binary(tmp_path / "rknn_server", "rknn_server version: 2.2.0 (abc build@2024)")
    proc = version_check("--server", server, "--expect", "2.3.2")
    assert proc.returncode == 1 and "rknn_server 2.2.0 but 2.3.2" in proc.stderr


def test_binary_without_a_version_string_fails(tmp_path: Path) -> None:
    lib = fake_binary(tmp_path / "libother.so", "not the runtime")
    proc = version_check("--runtime", lib, "--expect", "2.3.2")
    assert proc.returncode == 1
    assert 'has no "librknnrt version: X.Y.Z" string' in proc.stderr


def test_version_check_usage_errors_exit_2() -> None:
    assert version_check("--expect", "2.3.2").returncode == 2
    assert version_check("--bogus").returncode == 2


def test_shell_files_are_shellcheck_clean() -> None:
    proc = run(tool("shellcheck"), VERSION_CHECK, RKNPU2 / "files" / "rknn-server.init")
    assert proc.returncode == 0, proc.stdout


# --- recipe facts -----------------------------------------------------------------------------


def assignments(path: Path) -> dict[str, str]:
    """Plain `VAR = "value"` lines of a BitBake file (last one wins), enough for pinned facts."""
    found: dict[str, str] = {}
    for match in re.finditer(r'^([A-Za-z_][\w:${}\-\[\]]*)\s*[?:]?=\s*"([^"]*)"', path.read_text(), re.M):
        found[match.group(1)] = match.group(2)
    return found


def test_one_pinned_source_for_runtime_server_demos_and_lite2() -> None:
    inc = RKNPU2 / "rknn-toolkit2.inc"
    facts = assignments(inc)
    assert facts["SRCREV"] == "42aa1d426c0a9e0869b6374edba009f7208a1926"
    assert "# tag v2.3.2\nSRCREV" in inc.read_text()
    assert facts["LIC_FILES_CHKSUM"] == "file://LICENSE;md5=a2399e2538b7ebeac89b5b1cc648459a"
    assert facts["LICENSE_FLAGS"] == "rockchip-rknn"
    assert "branch=master" in facts["SRC_URI"] and "AUTOREV" not in inc.read_text()
    recipes = sorted([*RKNPU2.glob("*.bb"), *DEMOS.glob("*.bb")])
    assert {p.name for p in recipes} == {
        "librknnrt_2.3.2.bb",
        "rknn-server_2.3.2.bb",
        "rknn-mobilenet-demo_2.3.2.bb",
        "rknn-yolov5-demo_2.3.2.bb",
        "rknn-toolkit-lite2_2.3.2.bb",
    }
    for recipe in recipes:
        text = recipe.read_text()
        assert "SRCREV" not in text, f"{recipe.name} must take its SRCREV from rknn-toolkit2.inc"
        assert re.search(r"^require rknn-(toolkit2|demo)\.inc$", text, re.M), recipe.name
        assert recipe.stem.split("_")[1] == facts["RKNN_SDK_VERSION"]
    demo_inc = (DEMOS / "rknn-demo.inc").read_text()
    assert "\nrequire recipes-runtime/rknpu2/rknn-toolkit2.inc\n" in demo_inc


def test_server_is_gated_on_the_runtime_version_and_restarts_on_failure() -> None:
    recipe = (RKNPU2 / "rknn-server_2.3.2.bb").read_text()
    assert "rknn-version-check.sh --server ${D}${bindir}/rknn_server" in recipe
    assert "--runtime ${STAGING_LIBDIR}/librknnrt.so --expect ${RKNN_SDK_VERSION}" in recipe
    rdepends = assignments(RKNPU2 / "rknn-server_2.3.2.bb")["RDEPENDS:${PN}"].split()
    assert {"librknnrt", "binutils", "gawk", "grep", "psmisc"} <= set(rdepends)
    unit = (RKNPU2 / "files" / "rknn-server.service").read_text()
    assert "Restart=on-failure" in unit and "ExecStart=/usr/bin/rknn_server" in unit
    init = (RKNPU2 / "files" / "rknn-server.init").read_text()
    assert "### BEGIN INIT INFO" in init and "/usr/bin/start_rknn.sh" in init


def test_runtime_goes_where_rknn_server_dlopens_it() -> None:
    recipe = RKNPU2 / "librknnrt_2.3.2.bb"
    facts = assignments(recipe)
    assert facts["RKNN_DLOPEN_PATH"] == "/usr/lib/librknnrt.so"
    assert facts["FILES:${PN}"] == "${libdir}/librknnrt.so"
    assert "rknn_api.h" in recipe.read_text() and facts["FILES:${PN}-dev"] == "${includedir}"


def patch_header_problems(patch: Path) -> list[str]:
    header = patch.read_text().split("\n---\n", 1)[0]
    return [tag for tag in ("Upstream-Status:", "Signed-off-by:") if tag not in header]


def test_demo_patches_carry_upstream_status_and_sign_off(tmp_path: Path) -> None:
    patches = sorted((DEMOS / "files").glob("*.patch"))
    assert len(patches) == 2
    for patch in patches:
        assert patch_header_problems(patch) == [], patch.name
        assert "CMAKE_INSTALL_PREFIX_INITIALIZED_TO_DEFAULT" in patch.read_text()
    unsigned = tmp_path / "x.patch"
    unsigned.write_text(patches[0].read_text().replace("Signed-off-by:", "Reviewed-by:"))
    assert patch_header_problems(unsigned) == ["Signed-off-by:"]


def test_lite2_is_skipped_with_a_reason_off_its_wheels() -> None:
    recipe = (RKNPU2 / "rknn-toolkit-lite2_2.3.2.bb").read_text()
    assert (
        assignments(RKNPU2 / "rknn-toolkit-lite2_2.3.2.bb")["RKNN_LITE2_PYTHONS"]
        == "3.7 3.8 3.9 3.10 3.11 3.12"
    )
    assert "raise bb.parse.SkipRecipe(" in recipe and "packages.md5sum | md5sum -c -" in recipe


def test_kernel_fragment_enables_the_driver_its_debugfs_and_sram_with_one_memory_backend() -> None:
    lines = set((KERNEL / "files" / "rknpu.cfg").read_text().splitlines())
    assert {
        "CONFIG_ROCKCHIP_RKNPU=y",
        "CONFIG_ROCKCHIP_RKNPU_DEBUG_FS=y",
        "CONFIG_NO_GKI=y",
        "CONFIG_ROCKCHIP_RKNPU_SRAM=y",
        "CONFIG_ROCKCHIP_RKNPU_DRM_GEM=y",
        "# CONFIG_ROCKCHIP_RKNPU_DMA_HEAP is not set",
    } <= lines
    rocket = set((ROCKET_KERNEL / "files" / "rocket.cfg").read_text().splitlines())
    assert {"CONFIG_DRM_ACCEL=y", "CONFIG_ROCKCHIP_IOMMU=y", "CONFIG_DRM_ACCEL_ROCKET=m"} <= rocket


# --- bbappends never dangle in either Rockchip stack -----------------------------------------

# Recipe files of each stack that the bbappends here target (read from the layers' trees:
# poky walnascar d0b46a66, oe-core wrynose ef022bf8, JeffyCN/meta-rockchip walnascar f5acd79b).
VENDOR_RECIPES = [
    "linux-rockchip_6.1.bb",
    "linux-yocto_6.12.bb",
    "linux-libc-headers_6.1-custom.bb",
    "mesa.bb",
    "packagegroup-npu.bb",
    "npu-tools_1.0.0.bb",
]
MAINLINE_RECIPES = [
    "linux-yocto_6.18.bb",
    "linux-libc-headers_6.18.bb",
    "mesa.bb",
    "packagegroup-npu.bb",
    "npu-tools_1.0.0.bb",
]


def appends_to(bbappend: str, recipe: str) -> bool:
    """bb.cooker.CookerCollectFiles.get_file_appends: exact name, or '%' matching the rest."""
    base = bbappend.replace(".bbappend", ".bb")
    return base == recipe or ("%" in base and base.startswith(recipe[: base.index("%")]))


@pytest.mark.parametrize("recipes", [VENDOR_RECIPES, MAINLINE_RECIPES], ids=["vendor", "mainline"])
def test_every_bbappend_has_a_recipe_in_both_stacks(recipes: list[str]) -> None:
    for bbappend in [*LAYER.glob("*/*/*.bbappend"), *(ROOT / "meta-npu").glob("recipes-*/*/*.bbappend")]:
        assert any(appends_to(bbappend.name, r) for r in recipes), f"{bbappend.name} would dangle"
    assert not appends_to("linux-rockchip_%.bbappend", "linux-yocto_6.18.bb")


def test_kernel_appends_require_their_inc_only_for_their_family_and_feature() -> None:
    rockchip = (KERNEL / "linux-%.bbappend").read_text()
    assert "d.getVar('NPU_ENABLED') == '1' and d.getVar('NPU_FAMILY') == 'rknpu'" in rockchip
    # PN is the append's own name while the append is parsed: the recipe is chosen by override.
    assert "getVar('PN')" not in rockchip
    inc = (KERNEL / "linux-rockchip-rknpu.inc").read_text()
    for line in (
        "SRC_URI:append:pn-linux-rockchip",
        "NPU_DTS_FRAGMENT:pn-linux-rockchip",
        "NPU_BOOT_DTB:pn-linux-rockchip",
    ):
        assert line in inc, line
    rocket = (ROCKET_KERNEL / "linux-yocto_%.bbappend").read_text()
    assert "'linux-yocto-rocket.inc' if d.getVar('NPU_ENABLED') == '1'" in rocket and "== 'rocket'" in rocket
    assert (ROCKET_KERNEL / "linux-yocto-rocket.inc").is_file()


def test_prebuilt_runtime_is_limited_to_the_rknpu_socs() -> None:
    inc = assignments(RKNPU2 / "rknn-toolkit2.inc")
    pattern = re.compile(inc["COMPATIBLE_MACHINE"])
    # base.bbclass matches COMPATIBLE_MACHINE with re.match against each MACHINEOVERRIDES entry.
    for override in ("rockchip-rk3588-evb", "rockchip-rk3576-evb", "rk3588", "rk3576"):
        assert pattern.match(override), override
    for override in ("imx95-19x19-verdin", "rockchip", "rk3566", "milkv-duo256m", "rockchip-rk3568-evb"):
        assert not pattern.match(override), override
    assert inc["COMPATIBLE_HOST"] == "(aarch64|arm).*-linux(-gnu.*)?$"


# --- kas entry points ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "machine", "family"),
    [
        ("rk3588-evb.yml", "rockchip-rk3588-evb", "rknpu"),
        ("rk3576-evb.yml", "rockchip-rk3576-evb", "rknpu"),
        ("rock-5b.yml", "rock-5b", "rocket"),
    ],
)
def test_kas_entry_selects_machine_and_npu_family(entry: str, machine: str, family: str) -> None:
    merged: dict[str, object] = {}
    conf = ""
    todo = [ROOT / "kas" / entry]
    while todo:
        data = yaml.safe_load(todo.pop().read_text())
        todo += [ROOT / inc for inc in data.get("header", {}).get("includes", [])]
        merged.setdefault("machine", data.get("machine"))
        conf += "\n".join(data.get("local_conf_header", {}).values())
    assert merged["machine"] == machine
    assert f'NPU_FAMILY = "{family}"' in conf and 'MACHINE_FEATURES:append = " npu"' in conf
