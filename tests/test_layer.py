"""meta-npu's layer.conf and feature gating, checked on the committed files and on broken copies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from layerfacts import (
    confirmed_collections,
    gating_problems,
    layer_conf_problems,
    own_recipe_names,
    read_layer_conf,
)

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "meta-npu"
LAYER_CONF = LAYER / "conf" / "layer.conf"
CONFIRMED = Path(__file__).resolve().parent / "data" / "vendor-collections.json"


def test_confirmed_collections_name_their_source() -> None:
    for name, source in json.loads(CONFIRMED.read_text())["collections"].items():
        assert {"repo", "branch", "commit", "path"} <= set(source), name
        assert len(source["commit"]) == 40, name


def test_layer_conf_facts() -> None:
    conf = read_layer_conf(LAYER_CONF)
    assert layer_conf_problems(conf, confirmed_collections(CONFIRMED), LAYER) == []
    assert {c for c, _ in conf.dynamic} >= {"freescale-layer", "meta-freescale-ml", "rockchip", "riscv-layer"}


@pytest.mark.parametrize(
    ("good", "bad", "expected"),
    [
        ('LAYERSERIES_COMPAT_npu = "walnascar whinlatter wrynose"',
         'LAYERSERIES_COMPAT_npu = "walnascar"', "LAYERSERIES_COMPAT_npu"),
        ('LAYERDEPENDS_npu = "core"', 'LAYERDEPENDS_npu = "core openembedded-layer"', "LAYERDEPENDS_npu"),
        ('BBFILE_COLLECTIONS += "npu"', 'BBFILE_COLLECTIONS += "meta-npu"', "BBFILE_COLLECTIONS"),
        ("freescale-layer:${LAYERDIR}/dynamic-layers/freescale-layer/*/*/*.bb ",
         "meta-freescale:${LAYERDIR}/dynamic-layers/freescale-layer/*/*/*.bb ", "meta-freescale"),
        ("riscv-layer:${LAYERDIR}/dynamic-layers/riscv-layer/*/*/*.bb ",
         "riscv-layer:${LAYERDIR}/dynamic-layers/riscv/*/*/*.bb ", "does not point at"),
    ],
    ids=["compat", "depends", "collection", "unconfirmed-key", "wrong-directory"],
)
def test_a_broken_layer_conf_is_reported(good: str, bad: str, expected: str, tmp_path: Path) -> None:
    text = LAYER_CONF.read_text()
    assert good in text, f"layer.conf changed; update this case ({good!r})"
    broken = tmp_path / "layer.conf"
    broken.write_text(text.replace(good, bad, 1))
    problems = layer_conf_problems(read_layer_conf(broken), confirmed_collections(CONFIRMED), LAYER)
    assert any(expected in p for p in problems), problems


def test_an_unregistered_dynamic_layer_directory_is_reported(tmp_path: Path) -> None:
    (tmp_path / "dynamic-layers" / "meta-unknown").mkdir(parents=True)
    conf = read_layer_conf(LAYER_CONF)
    problems = layer_conf_problems(conf, confirmed_collections(CONFIRMED), tmp_path)
    assert "dynamic-layers/meta-unknown is not registered in BBFILES_DYNAMIC." in problems


@pytest.mark.parametrize(
    "bbappend", sorted(LAYER.rglob("*.bbappend")), ids=lambda p: str(p.relative_to(LAYER))
)
def test_bbappend_acts_only_with_the_npu_feature(bbappend: Path) -> None:
    assert gating_problems(bbappend, own_recipe_names(LAYER)) == []


def test_an_ungated_bbappend_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "linux-imx_%.bbappend"
    bad.write_text('FILESEXTRAPATHS:prepend := "${THISDIR}/files:"\nSRC_URI += "file://npu.cfg"\n')
    problems = gating_problems(bad, own_recipe_names(LAYER))
    assert any("acts without the npu feature" in p for p in problems)
    assert any("never tests NPU_ENABLED" in p for p in problems)


def test_the_linux_imx_bbappend_requires_the_neutron_inc_only_with_the_feature() -> None:
    text = (LAYER / "dynamic-layers/freescale-layer/recipes-kernel/linux/linux-imx_%.bbappend").read_text()
    assert "NPU_ENABLED" in text and "'neutron'" in text and "linux-imx-npu.inc" in text
    kernel = LAYER / "dynamic-layers/freescale-layer/recipes-kernel/linux"
    inc = (kernel / "linux-imx-npu.inc").read_text()
    assert 'DELTA_KERNEL_DEFCONFIG:append = " npu-neutron.cfg"' in inc
    cfg = (kernel / "linux-imx" / "npu-neutron.cfg").read_text()
    assert {"CONFIG_NEUTRON=y", "CONFIG_IMX_NEUTRON_REMOTEPROC=y"} <= set(cfg.split())
