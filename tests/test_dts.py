# SPDX-License-Identifier: MIT
"""Every device-tree source in the repository compiles with dtc, without a single warning.

.dts and .dtso files compile as they are. A .dtsi is a fragment meant to be /include/d into a
board's tree: it is compiled inside a minimal overlay wrapper (/dts-v1/; /plugin/;), so
references to the board's labels become fixups instead of errors.

A board tree that #includes a vendor SoC tree fetched only at build time cannot compile alone;
each one is listed in PREPROCESSED with the test module that builds it (cpp + dtc, against a
stand-in SoC tree), and an unlisted #include fails here.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SUFFIXES = (".dts", ".dtsi", ".dtso")
# Board trees built by cpp + dtc in their own tests, and where.
_DUO_TREE = "meta-npu/dynamic-layers/riscv-layer/recipes-kernel/linux/files/sg2002-milkv-duo256m-npu.dts"
# Buildroot's RK3588/RK3576 EVB board trees: the BSP board tree with the layer's SRAM .dtsi.
_RK_BOARD_TREES = (
    "buildroot/board/rockchip/rk3588-evb/rk3588-evb1-lp4-v10-linux.dts",
    "buildroot/board/rockchip/rk3576-evb/rk3576-evb1-v10-linux.dts",
)
PREPROCESSED = {
    _DUO_TREE: "tests/test_cv18xx.py",
    **dict.fromkeys(_RK_BOARD_TREES, "tests/test_buildroot.py"),
}
# The minimal base trees scripts/kernel-trees writes from recorded upstream values: upstream's
# nodes as recorded (a node whose reg was not read has none, so dtc warns), held against their
# records and compiled with the fragments by tests/test_kernel_trees.py.
GENERATED_TREES = "tests/data/kernel-trees"


@dataclass(frozen=True)
class DtcResult:
    returncode: int
    messages: str


def dtc() -> str:
    exe = shutil.which("dtc")
    if exe is None:
        pytest.fail("dtc is not installed: apt-get install device-tree-compiler (.ci/apt-packages.txt).")
    return exe


def compile_source(source: Path, workdir: Path) -> DtcResult:
    """Compile SOURCE to a .dtb/.dtbo in WORKDIR with dtc's default checks, all as warnings."""
    target = source
    if source.suffix == ".dtsi":
        target = workdir / f"{source.stem}-wrapper.dts"
        target.write_text(f'/dts-v1/;\n/plugin/;\n/include/ "{source}"\n')
    proc = subprocess.run(
        [dtc(), "-I", "dts", "-O", "dtb", "-@", "-o", str(workdir / f"{source.stem}.dtb"), str(target)],
        text=True,
        capture_output=True,
        check=False,
    )
    return DtcResult(proc.returncode, (proc.stdout + proc.stderr).strip())


def all_device_tree_sources() -> list[Path]:
    return sorted(
        p
        for p in ROOT.rglob("*")
        if p.suffix in SUFFIXES and p.is_file() and ".git" not in p.relative_to(ROOT).parts
    )


def device_tree_sources() -> list[Path]:
    return [
        p
        for p in all_device_tree_sources()
        if str(p.relative_to(ROOT)) not in PREPROCESSED
        and not str(p.relative_to(ROOT)).startswith(GENERATED_TREES)
    ]


def test_generated_trees_have_their_test() -> None:
    assert (ROOT / GENERATED_TREES).is_dir()
    assert GENERATED_TREES in (ROOT / "tests" / "test_kernel_trees.py").read_text()


def test_preprocessed_trees_are_exactly_the_ones_with_includes() -> None:
    with_includes = {
        str(p.relative_to(ROOT)) for p in all_device_tree_sources() if "#include" in p.read_text()
    }
    assert with_includes == set(PREPROCESSED)
    for source, test in PREPROCESSED.items():
        assert Path(source).name in (ROOT / test).read_text(), f"{test} does not build {source}"


def test_the_neutron_pool_fragment_is_among_the_sources() -> None:
    names = {p.name for p in device_tree_sources()}
    assert "imx95-neutron-pool.dtsi" in names


@pytest.mark.parametrize("source", device_tree_sources(), ids=lambda p: str(p.relative_to(ROOT)))
def test_source_compiles_without_warnings(source: Path, tmp_path: Path) -> None:
    result = compile_source(source, tmp_path)
    assert result.messages == ""
    assert result.returncode == 0


def test_a_fragment_with_a_warning_fails(tmp_path: Path) -> None:
    bad = tmp_path / "bad-pool.dtso"
    # A reg in a node whose parent gives no #address-cells/#size-cells: dtc warns.
    bad.write_text(
        "/dts-v1/;\n/plugin/;\n&{/reserved-memory} {\n"
        '\tpool@80000000 {\n\t\tcompatible = "shared-dma-pool";\n\t\treg = <0x80000000>;\n\t};\n};\n'
    )
    result = compile_source(bad, tmp_path)
    assert "Warning" in result.messages


def test_a_fragment_with_a_syntax_error_fails(tmp_path: Path) -> None:
    bad = tmp_path / "broken.dtsi"
    bad.write_text("&neutron {\n\tmemory-region = <&neutron_pool>\n};\n")  # missing ';'
    result = compile_source(bad, tmp_path)
    assert result.returncode != 0
    assert "syntax error" in result.messages
