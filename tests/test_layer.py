# SPDX-License-Identifier: MIT
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
        (
            'LAYERSERIES_COMPAT_npu = "scarthgap walnascar wrynose blacksail"',
            'LAYERSERIES_COMPAT_npu = "walnascar"',
            "LAYERSERIES_COMPAT_npu",
        ),
        ('LAYERDEPENDS_npu = "core"', 'LAYERDEPENDS_npu = "core openembedded-layer"', "LAYERDEPENDS_npu"),
        ('BBFILE_COLLECTIONS += "npu"', 'BBFILE_COLLECTIONS += "meta-npu"', "BBFILE_COLLECTIONS"),
        (
            "freescale-layer:${LAYERDIR}/dynamic-layers/freescale-layer/*/*/*.bb ",
            "meta-freescale:${LAYERDIR}/dynamic-layers/freescale-layer/*/*/*.bb ",
            "meta-freescale",
        ),
        (
            "riscv-layer:${LAYERDIR}/dynamic-layers/riscv-layer/*/*/*.bb ",
            "riscv-layer:${LAYERDIR}/dynamic-layers/riscv/*/*/*.bb ",
            "does not point at",
        ),
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
    # The .cfg always; DELTA_KERNEL_DEFCONFIG only below 6.18, whose recipe refuses the variable.
    assert 'SRC_URI += "file://npu-neutron.cfg"' in inc
    assert "vercmp_string_op(d.getVar('LINUX_VERSION') or '0', '6.18', '<')" in inc
    assert "d.appendVar('DELTA_KERNEL_DEFCONFIG', ' npu-neutron.cfg')" in inc
    cfg = (kernel / "linux-imx" / "npu-neutron.cfg").read_text()
    assert {"CONFIG_NEUTRON=y", "CONFIG_IMX_NEUTRON_REMOTEPROC=y"} <= set(cfg.split())


# --- npu-base.bbclass and npu-manifest.bbclass under real BitBake (bbevents.py) ---

CLASSES = [LAYER / "classes" / "npu-base.bbclass", LAYER / "classes" / "npu-manifest.bbclass"]
IMX95 = {
    "MACHINE": "imx95-19x19-verdin",
    "MACHINEOVERRIDES": "aarch64:imx-generic-bsp:imx-nxp-bsp:mx9-nxp-bsp:mx95-generic-bsp:mx95-nxp-bsp:mx95",
    "OVERRIDES": "linux:aarch64:imx-generic-bsp:imx-nxp-bsp:mx9-nxp-bsp:mx95-generic-bsp:mx95-nxp-bsp:mx95",
    "BBFILE_COLLECTIONS": "core freescale-layer meta-freescale-ml npu",
    "MACHINE_FEATURES": "npu",
}


def config(**changes: str) -> dict[str, str]:
    """The i.MX95 Verdin configuration, as meta-freescale sets it, with CHANGES applied."""
    variables = dict(IMX95, LAYERDIR=str(LAYER))
    variables.update(changes)
    return variables


def with_layer_conf(variables: dict[str, str]) -> list[Path]:
    return [LAYER_CONF, *CLASSES] if "NPU_ENABLED" not in variables else CLASSES


def one_sentence(message: str) -> bool:
    return message.endswith(".") and ". " not in message and "\n" not in message


def parse(variables: dict[str, str]):  # noqa: ANN201 - a context manager of bbevents
    from bbevents import parsed_classes

    return parsed_classes(with_layer_conf(variables), variables)


def test_npu_enabled_follows_machine_or_distro_features() -> None:
    for features, expected in ((("npu", ""), "1"), (("", "npu"), "1"), (("", ""), "0")):
        with parse(config(MACHINE_FEATURES=features[0], DISTRO_FEATURES=features[1])) as bbc:
            assert bbc.data.getVar("NPU_ENABLED") == expected, features


def test_npu_family_defaults_to_neutron_on_the_imx95_nxp_bsp_only() -> None:
    with parse(config()) as bbc:
        assert bbc.data.getVar("NPU_FAMILY") == "neutron"
    with parse(config(OVERRIDES="linux:aarch64", MACHINEOVERRIDES="aarch64")) as bbc:
        assert bbc.data.getVar("NPU_FAMILY") == "none"


def test_a_recipe_of_the_layer_keeps_the_machines_default_family() -> None:
    from bbevents import parsed_classes

    family = LAYER / "classes" / "npu-family.bbclass"
    with parsed_classes([*CLASSES, family], dict(config(), NPU_ENABLED="1")) as bbc:
        assert bbc.data.getVar("NPU_FAMILY") == "neutron"
        assert "npu-neutron" in bbc.data.getVar("OVERRIDES").split(":")
    with parsed_classes([family], {"OVERRIDES": "linux"}) as bbc:
        assert "npu-none" in bbc.data.getVar("OVERRIDES").split(":")


def test_an_unknown_npu_family_stops_the_parse_with_one_sentence() -> None:
    import bb.event

    with parse(config(NPU_FAMILY="hailo")) as bbc:
        message = bbc.fire(bb.event.ConfigParsed())
    assert message is not None and one_sentence(message)
    assert 'NPU_FAMILY = "hailo"' in message and "neutron, rknpu, rocket, cvitek-tpu, none" in message
    with parse(config(NPU_FAMILY="rocket")) as bbc:
        assert bbc.fire(bb.event.ConfigParsed()) is None


def test_a_missing_vendor_layer_stops_the_build_with_one_sentence() -> None:
    import bb.event

    start = bb.event.BuildStarted("npu-image", ["npu-image"])
    with parse(config(BBFILE_COLLECTIONS="core freescale-layer npu", ACCEPT_FSL_EULA="1")) as bbc:
        message = bbc.fire(start)
    assert message is not None and one_sentence(message) and "meta-freescale-ml" in message
    with parse(config(ACCEPT_FSL_EULA="1")) as bbc:
        assert bbc.fire(start) is None
    with parse(config(BBFILE_COLLECTIONS="core npu", ACCEPT_FSL_EULA="1", MACHINE_FEATURES="")) as bbc:
        assert bbc.fire(start) is None  # integration off: the layer does not interfere


def test_the_eula_guard_stops_an_nxp_bsp_build_without_the_opt_in() -> None:
    import bb.event

    start = bb.event.BuildStarted("npu-image", ["npu-image"])
    with parse(config()) as bbc:
        message = bbc.fire(start)
    assert message is not None and one_sentence(message)
    assert "kas/opt/accept-fsl-eula.yml" in message and "EULA" in message and "legal" in message
    with parse(config(ACCEPT_FSL_EULA="0")) as bbc:
        assert bbc.fire(start) == message
    with parse(config(ACCEPT_FSL_EULA="1")) as bbc:
        assert bbc.fire(start) is None
    # meta-imx in the build stops it too, whatever the machine's overrides say
    with_meta_imx = "core freescale-layer meta-freescale-ml imx-machine-learning npu"
    imx_stack = config(MACHINEOVERRIDES="aarch64", OVERRIDES="aarch64", BBFILE_COLLECTIONS=with_meta_imx)
    with parse(imx_stack) as bbc:
        assert bbc.fire(start) == message


def test_the_eula_guard_acts_only_with_the_npu_feature() -> None:
    import bb.event

    with parse(config(MACHINE_FEATURES="", DISTRO_FEATURES="")) as bbc:
        assert bbc.fire(bb.event.BuildStarted("core-image-minimal", ["core-image-minimal"])) is None


@pytest.mark.parametrize(("features", "inherited"), [("npu", "npu-base"), ("", "")])
def test_layer_conf_inherits_the_global_class_only_with_the_npu_feature(
    features: str, inherited: str
) -> None:
    from bbevents import parsed_classes

    with parsed_classes([LAYER_CONF], {"LAYERDIR": str(LAYER), "MACHINE_FEATURES": features}) as bbc:
        assert bbc.data.getVar("INHERIT").split() == inherited.split()


def test_the_eula_guard_leaves_other_machines_alone() -> None:
    import bb.event

    other = config(
        MACHINE="qemuarm64",
        MACHINEOVERRIDES="aarch64:qemuall",
        OVERRIDES="linux:aarch64",
        BBFILE_COLLECTIONS="core npu",
    )
    with parse(other) as bbc:
        assert bbc.fire(bb.event.BuildStarted("npu-image", ["npu-image"])) is None


@pytest.mark.parametrize(
    ("pn", "features", "exported"),
    [
        ("linux-imx", "npu", True),
        ("neutron", "npu", True),
        ("tensorflow-lite-neutron-delegate", "npu", True),
        ("busybox", "npu", False),
    ],
)
def test_only_the_manifest_recipes_export_srcrev_and_only_with_the_feature(
    pn: str, features: str, exported: bool
) -> None:
    variables = config(
        PN=pn,
        MACHINE_FEATURES=features,
        PKGDATA_VARS="PN PV",
        **{"PREFERRED_PROVIDER_virtual/kernel": "linux-imx"},
    )
    with parse(variables) as bbc:
        bbc.run_anonymous()
        pkgdata_vars = bbc.data.getVar("PKGDATA_VARS").split()
    assert ("NPU_SRCREV" in pkgdata_vars) is exported
    assert pkgdata_vars[:2] == ["PN", "PV"]


@pytest.mark.parametrize(
    ("src_uri", "revs", "expected"),
    [
        (
            "git://github.com/nxp-imx/linux-imx.git;protocol=https;branch=lf-6.12.y",
            {"SRCREV": "7dfe158543c95df22010cdd697ecaf043db70315"},
            "7dfe158543c95df22010cdd697ecaf043db70315",
        ),
        (
            "git://github.com/nxp-imx/tflite-neutron-delegate.git;protocol=https;name=neutron "
            "git://github.com/nxp-imx/tensorflow-imx.git;protocol=https;name=tf;destsuffix=tfgit",
            {
                "SRCREV_neutron": "a5d640e64a2e7fb73a66ba2091cbe46b2dc4b45e",
                "SRCREV_tf": "79ef5ba72c03a5a95d3e0b177b3589f7fa5502fa",
            },
            "a5d640e64a2e7fb73a66ba2091cbe46b2dc4b45e",
        ),
        ("https://example.org/x-1.0.tar.gz", {"SRCREV": "7dfe158543c95df22010cdd697ecaf043db70315"}, ""),
        ("git://example.org/x.git;protocol=https;branch=main", {"SRCREV": "${AUTOREV}"}, ""),
    ],
    ids=["kernel", "two-sources-first-wins", "tarball", "not-a-full-hash"],
)
def test_primary_srcrev(src_uri: str, revs: dict[str, str], expected: str) -> None:
    with parse(config(SRC_URI=src_uri, AUTOREV="AUTOINC", **revs)) as bbc:
        assert bbc.function("npu_primary_srcrev")(bbc.data) == expected


def test_model_records_hash_every_model_file_of_the_rootfs(tmp_path: Path) -> None:
    import hashlib

    models = tmp_path / "usr" / "share" / "npu-models"
    (models / "sub").mkdir(parents=True)
    (models / "a.tflite").write_bytes(b"model a")
    (models / "sub" / "b.tflite").write_bytes(b"model b")
    (models / "link.tflite").symlink_to("a.tflite")
    with parse(config()) as bbc:
        records = bbc.function("npu_model_records")(str(tmp_path), "/usr/share/npu-models")
    assert records == [
        {"path": "/usr/share/npu-models/a.tflite", "sha256": hashlib.sha256(b"model a").hexdigest()},
        {"path": "/usr/share/npu-models/sub/b.tflite", "sha256": hashlib.sha256(b"model b").hexdigest()},
    ]


def test_without_the_feature_the_image_is_skipped_with_its_reason_not_a_parse_error() -> None:
    """npu-base (where the manifest's recipes are chosen) is inherited only with the feature; the
    image that inherits npu-manifest must then be skipped, and its task flags still expand."""
    from bbevents import parsed_classes

    variables = dict(config(MACHINE_FEATURES="", PN="npu-image"), NPU_ENABLED="0")
    with parsed_classes([LAYER / "classes" / "npu-manifest.bbclass"], variables) as bbc:
        assert bbc.data.getVarFlag("do_rootfs", "depends").strip() == ""
        with pytest.raises(bbc.bb.parse.SkipRecipe, match="needs the NPU feature"):
            bbc.run_anonymous()
    with parse(config(PN="npu-image")) as bbc:
        bbc.run_anonymous()  # with the feature: not skipped
        assert "do_packagedata" in bbc.data.getVarFlag("do_rootfs", "depends")


@pytest.mark.parametrize("fragment", ["", "rknpu-sram-rk3588.dtsi"])
def test_the_devicetree_class_touches_only_a_recipe_with_a_fragment(fragment: str) -> None:
    """linux-%.bbappend inherits npu-devicetree into every linux-* recipe; linux-libc-headers (no
    fragment) must keep its SRC_URI and do_patch as they are, or the toolchain's sstate is lost."""
    from bbevents import parsed_classes

    variables = {"SRC_URI": "git://example.org/linux.git;branch=main", "NPU_DTS_FRAGMENT": fragment}
    with parsed_classes([LAYER / "classes" / "npu-devicetree.bbclass"], variables) as bbc:
        bbc.run_anonymous()
        src_uri = bbc.data.getVar("SRC_URI")
        postfuncs = bbc.data.getVarFlag("do_patch", "postfuncs") or ""
        vardeps = bbc.data.getVarFlag("do_patch", "vardeps") or ""
    if fragment:
        assert src_uri.split()[-1] == f"file://{fragment}"
        assert "npu_dts_include" in postfuncs.split() and "NPU_BOOT_DTB" in vardeps.split()
    else:
        assert src_uri == "git://example.org/linux.git;branch=main"
        assert postfuncs == "" and vardeps == ""
