# SPDX-License-Identifier: MIT
"""CI's minimal base trees agree with the values recorded from the upstream kernel trees.

tests/data/kernel-trees/<name>.json records, per upstream file (repository, commit, path), the
nodes and properties meta-npu's fragments rely on; scripts/kernel-trees writes <name>.dtsi from
it. A committed tree that is not what its record gives fails here, and so does a tree whose
compiled values differ from the record (each twin below breaks one and sees the failure).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from boardtrees import CV181X_BOARD_STUBS
from devicetree import RECORDS, cells, compile_dts, fdtget, record_mismatches

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "scripts" / "kernel-trees"
RECORD_FILES = sorted(RECORDS.glob("*.json"))


def generator(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GENERATOR), *map(str, args)], text=True, capture_output=True, check=False
    )


def compile_tree(tree_text: str, tmp: Path) -> Path:
    (tmp / "base.dtsi").write_text(tree_text)
    board = tmp / "board.dts"
    board.write_text('/dts-v1/;\n#include "base.dtsi"\n')
    return compile_dts(board, tmp / "board.dtb")


def test_every_record_names_where_each_file_was_read() -> None:
    assert {p.stem for p in RECORD_FILES} >= {"rk3588-bsp", "rk3576-bsp"}
    for path in RECORD_FILES:
        record = json.loads(path.read_text())
        for name, src in record["files"].items():
            assert "document" in src or len(src.get("commit", "")) == 40, (
                f"{path.name}: {name} has no full commit"
            )


def test_committed_trees_are_what_their_records_give() -> None:
    proc = generator("--check")
    assert proc.returncode == 0, proc.stderr


def test_a_hand_edited_tree_fails_the_check(tmp_path: Path) -> None:
    record = tmp_path / "rk3588-bsp.json"
    shutil.copy(RECORDS / "rk3588-bsp.json", record)
    text = (RECORDS / "rk3588-bsp.dtsi").read_text()
    (tmp_path / "rk3588-bsp.dtsi").write_text(
        text.replace("<136 24576>, <137 49152>, <141", "<136 24576>, <141")
    )
    proc = generator("--check", record)
    assert proc.returncode == 1
    assert "is not what" in proc.stderr and "run scripts/kernel-trees" in proc.stderr


@pytest.mark.parametrize("record_path", RECORD_FILES, ids=lambda p: p.stem)
def test_compiled_tree_carries_the_recorded_values(record_path: Path, tmp_path: Path) -> None:
    record = json.loads(record_path.read_text())
    dtb = compile_tree(record_path.with_suffix(".dtsi").read_text(), tmp_path)
    assert record_mismatches(dtb, record) == []


def test_a_tree_that_differs_from_its_record_is_named(tmp_path: Path) -> None:
    record = json.loads((RECORDS / "rk3588-bsp.json").read_text())
    text = (
        (RECORDS / "rk3588-bsp.dtsi")
        .read_text()
        .replace("syssram: sram@ff001000", "system_sram2: sram@ff001000")
    )
    text = text.replace("rockchip,rcb-min-width = <512>;", "rockchip,rcb-min-width = <256>;", 1)
    dtb = compile_tree(text, tmp_path)
    problems = record_mismatches(dtb, record)
    assert any("rcb-min-width" in p and "256" not in p.split("recorded")[1] for p in problems), problems


def test_duo_framebuffer_ends_where_the_ion_carveout_starts(tmp_path: Path) -> None:
    """The Duo stand-in carries the SDK's reserved-memory/cvifb (cv181x_base.dtsi at c5adb094,
    sized by U-Boot's memory-map header) beside meta-npu's ION region, as the real tree does."""
    files = ROOT / "meta-npu/dynamic-layers/riscv-layer/recipes-kernel/linux/files"
    dts = tmp_path / "dts"
    for name, text in CV181X_BOARD_STUBS.items():
        (dts / name).parent.mkdir(parents=True, exist_ok=True)
        (dts / name).write_text(text)
    for name in ("sg2002-milkv-duo256m-npu.dts", "sg2002-milkv-duo256m-tpu-ion.dtsi"):
        shutil.copy(files / name, dts / name)
    dtb = compile_dts(dts / "sg2002-milkv-duo256m-npu.dts", tmp_path / "duo.dtb", (dts / "sg2002",))
    fb = cells(dtb, "/reserved-memory/cvifb", "alloc-ranges")
    ion = cells(dtb, "/reserved-memory/ion", "alloc-ranges")
    assert fb[1] + fb[3] == ion[1] == 0x8B300000
    assert fdtget(dtb, "/soc/interrupt-controller@70000000", "compatible") == "riscv,plic0"
    assert fdtget(dtb, "/tpu", "interrupt-names").split() == ["tiu_irq", "tdma_irq"]
