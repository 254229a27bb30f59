# SPDX-License-Identifier: MIT
"""The BR2_EXTERNAL tree (buildroot/: CV18xx, Rockchip RKNPU and Rocket) and scripts/br-check-package.

br-check-package re-implements Buildroot's check-package rules (Buildroot is not in CI); every
rule the tree relies on is shown to fire on a broken copy of the tree and to stay quiet on the
real one. The pins of the Buildroot packages are the same commits as the Yocto recipes', and the
files both build systems use (kernel fragments, SRAM trees, the version check, the systemd unit,
the demo patches) are the layer's own. Recipes and the make-time checks of external.mk run in
real make; the SRAM board tree is compiled with cpp and dtc as the kernel does; the rknn_server
init script runs under a real start-stop-daemon.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_rockchip import SOCS, Soc, check_npu_sram, make_kernel_tree, tool

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "buildroot"
CHECK = ROOT / "scripts" / "br-check-package"
RISCV_LAYER = ROOT / "meta-npu" / "dynamic-layers" / "riscv-layer"


def br_check(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECK), *map(str, paths)], capture_output=True, text=True, check=False
    )


def mk_value(pkg: str, var: str) -> str:
    text = (TREE / "package" / pkg / f"{pkg}.mk").read_text()
    m = re.search(rf"^{var}\s*=\s*(.*)$", text, re.M)
    assert m, f"{pkg}.mk sets no {var}"
    return m.group(1).strip()


# ------------------------------------------------------------------ the tree as committed


def test_tree_passes_every_rule() -> None:
    proc = br_check(TREE)
    assert proc.stdout == ""
    assert proc.returncode == 0


def test_external_desc_names_the_tree() -> None:
    desc = (TREE / "external.desc").read_text()
    assert re.search(r"^name: NPU$", desc, re.M)
    assert "$(BR2_EXTERNAL_NPU_PATH)/package/" in (TREE / "external.mk").read_text()


def test_every_package_has_config_and_makefile() -> None:
    packages = sorted(p.name for p in (TREE / "package").iterdir() if p.is_dir())
    assert {"cvi-tpu", "cviruntime", "npu-run", "npu-models"} <= set(packages)
    for pkg in packages:
        assert (TREE / "package" / pkg / f"{pkg}.mk").is_file()


def test_tpu_module_uses_kernel_module_infrastructure_in_dependency_order() -> None:
    mk = (TREE / "package" / "cvi-tpu" / "cvi-tpu.mk").read_text()
    assert "$(eval $(kernel-module))" in mk and "$(eval $(generic-package))" in mk
    assert mk_value("cvi-tpu", "CVI_TPU_MODULE_SUBDIRS") == "interdrv/sys interdrv/base interdrv/tpu"


GIT_PACKAGES = ["cvi-tpu", "cvikernel", "cvi-cnpy", "cvibuilder", "cviruntime"]


@pytest.mark.parametrize("pkg", GIT_PACKAGES)
def test_git_packages_pin_a_full_commit(pkg: str) -> None:
    upper = pkg.replace("-", "_").upper()
    assert re.fullmatch(r"[0-9a-f]{40}", mk_value(pkg, f"{upper}_VERSION"))
    assert mk_value(pkg, f"{upper}_SITE_METHOD") == "git"
    assert mk_value(pkg, f"{upper}_SITE").startswith("https://github.com/sophgo/")


@pytest.mark.parametrize("pkg", ["cvikernel", "cvi-cnpy", "cvibuilder", "cviruntime"])
def test_hash_names_the_archive_of_the_pinned_commit(pkg: str) -> None:
    upper = pkg.replace("-", "_").upper()
    version = mk_value(pkg, f"{upper}_VERSION")
    hashes = (TREE / "package" / pkg / f"{pkg}.hash").read_text()
    assert f"  {pkg}-{version}-br1.tar.gz" in hashes


def yocto_srcrevs() -> dict[str, str]:
    """github repository name -> SRCREV, from the riscv-layer recipes."""
    pins = {}
    for recipe in list(RISCV_LAYER.rglob("*.bb")) + list(RISCV_LAYER.rglob("*.inc")):
        text = recipe.read_text()
        url = re.search(r"git://github\.com/sophgo/([\w-]+)\.git", text)
        rev = re.search(r'^SRCREV = "([0-9a-f]{40})"', text, re.M)
        if url and rev:
            pins[url.group(1)] = rev.group(1)
    return pins


@pytest.mark.parametrize(
    ("pkg", "repo"),
    [
        ("cvi-tpu", "osdrv"),
        ("cvikernel", "cvikernel"),
        ("cvi-cnpy", "cnpy"),
        ("cvibuilder", "cvibuilder"),
        ("cviruntime", "cviruntime"),
    ],
)
def test_buildroot_and_yocto_build_the_same_commit(pkg: str, repo: str) -> None:
    upper = pkg.replace("-", "_").upper()
    assert yocto_srcrevs()[repo] == mk_value(pkg, f"{upper}_VERSION")


def test_npu_run_installs_the_tools_of_the_layer() -> None:
    site = mk_value("npu-run", "NPU_RUN_SITE").replace("$(BR2_EXTERNAL_NPU_PATH)", str(TREE))
    files = Path(site).resolve()
    assert (files / "npu-run").is_file() and (files / "npu-info").is_file()
    assert (files / "npu_target" / "run.py").is_file()


def own_symbols() -> set[str]:
    found = set()
    for cfg in TREE.rglob("Config.in"):
        found |= set(re.findall(r"^\s*(?:menu)?config\s+(BR2_\w+)", cfg.read_text(), re.M))
    return found


def test_fragment_sets_only_known_symbols_of_this_tree() -> None:
    fragment = (TREE / "board" / "milkv-duo256m" / "npu.config").read_text()
    ours = [
        s
        for s in re.findall(r"^(BR2_\w+)=", fragment, re.M)
        if s.startswith(("BR2_NPU_", "BR2_PACKAGE_CVI", "BR2_PACKAGE_NPU_"))
    ]
    assert ours and set(ours) <= own_symbols()
    assert 'BR2_NPU_CVI_CHIP="cv181x"' in fragment
    assert "BR2_PACKAGE_OVERRIDE_FILE=" in fragment
    assert (TREE / "board" / "milkv-duo256m" / "local.mk").is_file()


def test_cviruntime_patch_applies_to_the_line_it_fixes(tmp_path: Path) -> None:
    patch = next((TREE / "package" / "cviruntime").glob("0001-*.patch"))
    cmake = tmp_path / "CMakeLists.txt"
    # The lines the patch touches, as in cviruntime 3f493864 CMakeLists.txt lines 8-14.
    cmake.write_text(
        "  RESULT_VARIABLE GIT_EXEC_RESULT\n  OUTPUT_VARIABLE GIT_SHORT_HASH)\n\n"
        "string(STRIP ${GIT_SHORT_HASH} GIT_SHORT_HASH)\n"
        'string(TIMESTAMP BUILD_TIME "%Y%m%d")\n'
        'set(RUNTIME_VERSION "${GIT_SHORT_HASH}@${BUILD_TIME}")\n'
        'message(STATUS "runtime version: ${RUNTIME_VERSION}")\n'
    )
    text = patch.read_text().replace("@@ -8,7 +8,7 @@", "@@ -1,7 +1,7 @@")
    proc = subprocess.run(
        ["patch", "-p1", "--dry-run"], input=text, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ------------------------------------------------------------------ every rule can fail

Mutation = Callable[[Path], None]


def edit(rel: str, old: str, new: str) -> Mutation:
    def apply(tree: Path) -> None:
        path = tree / rel
        text = path.read_text()
        assert old in text, f"{rel} lacks {old!r}"
        path.write_text(text.replace(old, new, 1))

    return apply


def chmod_x(rel: str) -> Mutation:
    def apply(tree: Path) -> None:
        path = tree / rel
        path.chmod(path.stat().st_mode | stat.S_IXUSR)

    return apply


PATCH = "package/cviruntime/0001-CMakeLists.txt-build-from-a-source-tree-without-git-metadata.patch"
KERNEL_CFG = "package/cvikernel/Config.in"
INIT = "package/cvi-tpu/S05cvi-tpu"
CNPY_HASH = "package/cvi-cnpy/cvi-cnpy.hash"
LOCAL_MK = "board/milkv-duo256m/local.mk"

SABOTAGE: dict[str, tuple[Mutation, str]] = {
    "trailing space": (edit("package/cvikernel/cvikernel.mk", "= YES\n", "= YES \n"), "TrailingSpace"),
    "two empty lines": (edit("package/cvikernel/cvikernel.mk", "\n\n", "\n\n\n"), "ConsecutiveEmptyLines"),
    "empty last line": (
        edit("package/npu-run/npu-run.mk", "(generic-package))\n", "(generic-package))\n\n"),
        "EmptyLastLine",
    ),
    "no newline at eof": (
        edit("package/npu-run/npu-run.mk", "(generic-package))\n", "(generic-package))"),
        "NewlineAtEof",
    ),
    "utf-8": (edit("package/cvikernel/cvikernel.mk", "licence", "licence \u2014"), "Utf8Characters"),
    "executable Config.in": (chmod_x("package/npu-run/Config.in"), "NotExecutable"),
    "header": (edit("package/npu-run/npu-run.mk", "#" * 80 + "\n#\n", "#" * 79 + "\n#\n"), "PackageHeader"),
    "useless flag": (
        edit(
            "package/cvikernel/cvikernel.mk",
            "CVIKERNEL_INSTALL_STAGING = YES\n",
            "CVIKERNEL_INSTALL_STAGING = YES\nCVIKERNEL_INSTALL_TARGET = YES\n",
        ),
        "UselessFlag",
    ),
    "typo in variable": (
        edit("package/cvi-cnpy/cvi-cnpy.mk", "CVI_CNPY_DEPENDENCIES", "CNPY_DEPENDENCIES"),
        "TypoInPackageVariable",
    ),
    "override": (
        edit(
            "package/cvi-cnpy/cvi-cnpy.mk",
            "CVI_CNPY_CONF_OPTS = -DENABLE_STATIC=OFF\n",
            "CVI_CNPY_CONF_OPTS = -DENABLE_STATIC=OFF\nCVI_CNPY_CONF_OPTS = -DX=1\n",
        ),
        "OverriddenVariable",
    ),
    "ifdef": (
        edit(
            "package/cvi-tpu/cvi-tpu.mk",
            "$(eval $(kernel-module))",
            "ifdef BR2_FOO\nendif\n$(eval $(kernel-module))",
        ),
        "Ifdef",
    ),
    "braces": (
        edit("package/npu-run/npu-run.mk", "$(@D)/npu-run ", "${TARGET_DIR}/npu-run "),
        "VariableWithBraces",
    ),
    "spaces in define": (edit("package/npu-run/npu-run.mk", "\tmkdir -p", "        mkdir -p"), "Indent"),
    "two spaces before backslash": (
        edit("package/cvi-tpu/cvi-tpu.mk", "$(CVI_TPU_CHIP)) \\", "$(CVI_TPU_CHIP))  \\"),
        "SpaceBeforeBackslash",
    ),
    "hostdir usr": (
        edit(
            "package/cvibuilder/cvibuilder.mk",
            "-DFLATBUFFERS_PATH=$(HOST_DIR)",
            "-DFLATBUFFERS_PATH=$(HOST_DIR)/usr",
        ),
        "DoNotInstallToHostdirUsr",
    ),
    "config indent": (
        edit(KERNEL_CFG, "\tdepends on BR2_INSTALL_LIBSTDCPP\n", "    depends on BR2_INSTALL_LIBSTDCPP\n"),
        "Indent",
    ),
    "help too long": (
        edit(
            KERNEL_CFG,
            "\t  Sophgo CV18xx TPU kernel-instruction library",
            "\t  Sophgo CV18xx TPU kernel-instruction library " + "x" * 40,
        ),
        "HelpText",
    ),
    "attribute order": (
        edit(
            KERNEL_CFG,
            '\tbool "cvikernel"\n\tdepends on BR2_INSTALL_LIBSTDCPP\n',
            '\tdepends on BR2_INSTALL_LIBSTDCPP\n\tbool "cvikernel"\n',
        ),
        "AttributesOrder",
    ),
    "redefined config": (
        edit("Config.in", "endmenu", 'config BR2_NPU_CVI_CHIP\n\tstring "again"\n\nendmenu'),
        "RedefinedConfig",
    ),
    "hash spacing": (edit(CNPY_HASH, "sha256  85972", "sha256 85972"), "HashSpaces"),
    "hash length": (edit(CNPY_HASH, "sha256  85972df3", "sha256  85972df"), "HashType"),
    "hash type": (edit(CNPY_HASH, "sha256  85972", "sha257  85972"), "HashType"),
    "hash fields": (edit(CNPY_HASH, "  LICENSE\n", "\n"), "HashNumberOfFields"),
    "patch without Upstream": (edit(PATCH, "Upstream: not submitted\n", ""), "Upstream"),
    "patch without sob": (edit(PATCH, "Signed-off-by:", "Signed-by:"), "Sob"),
    "init script spaces": (edit(INIT, "\tprintf 'Loading", "  printf 'Loading"), "Indent"),
    "init script shellcheck": (edit(INIT, 'if ! modprobe "$module"', "if ! modprobe $module"), "Shellcheck"),
    "init script without DAEMON": (edit(INIT, 'DAEMON="cvi-tpu"\n', ""), "Variables"),
    "init script DAEMON not its name": (edit(INIT, 'DAEMON="cvi-tpu"', 'DAEMON="tpu"'), "Variables"),
    "override file without its disable comment": (
        edit(LOCAL_MK, "# check-package disable TypoInPackageVariable", "# overrides"),
        "TypoInPackageVariable",
    ),
    "default n": (
        edit(
            KERNEL_CFG,
            "\tdepends on BR2_INSTALL_LIBSTDCPP\n",
            "\tdefault n\n\tdepends on BR2_INSTALL_LIBSTDCPP\n",
        ),
        "NoDefaultN",
    ),
    "unsourced package": (
        edit("Config.in", 'source "$BR2_EXTERNAL_NPU_PATH/package/npu-run/Config.in"\n', ""),
        "ExternalTree",
    ),
    "package without mk": (
        lambda tree: (tree / "package" / "npu-run" / "npu-run.mk").unlink(),
        "ExternalTree",
    ),
}


@pytest.mark.parametrize("case", sorted(SABOTAGE))
def test_broken_tree_is_reported(tmp_path: Path, case: str) -> None:
    tree = tmp_path / "buildroot"
    shutil.copytree(TREE, tree)
    mutate, rule = SABOTAGE[case]
    mutate(tree)
    proc = br_check(tree)
    assert proc.returncode == 1
    assert f"[{rule}]" in proc.stdout, proc.stdout


def test_tree_needs_no_ignore_list() -> None:
    # Buildroot's `utils/check-package -b` reads no ignore list by itself: a tree that relies on
    # one prints warnings there (Buildroot 2025.02.9 printed "S05cvi-tpu:0: DAEMON variable not
    # defined" while the ignore list hid it from this re-implementation).
    assert not (TREE / ".checkpackageignore").exists()


def test_ignore_list_only_when_given(tmp_path: Path) -> None:
    tree = tmp_path / "buildroot"
    shutil.copytree(TREE, tree)
    edit(INIT, 'DAEMON="cvi-tpu"\n', "")(tree)
    ignore = tree / ".checkpackageignore"
    ignore.write_text(f"{INIT} lib_sysv.Variables\n")
    assert "[Variables]" in br_check(tree).stdout
    proc = subprocess.run(
        [sys.executable, str(CHECK), "--ignore-list", str(ignore), str(tree)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout


def test_stale_ignore_entry_is_reported(tmp_path: Path) -> None:
    ignore = tmp_path / "ignore"
    ignore.write_text(f"{TREE / INIT} lib_sysv.Variables\n")
    proc = subprocess.run(
        [sys.executable, str(CHECK), f"--ignore-list={ignore}", str(TREE)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert "Variables was expected to fail" in proc.stdout


def test_defconfig_must_force_hash_checks(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "board_defconfig").write_text("BR2_aarch64=y\n")
    proc = br_check(configs / "board_defconfig")
    assert proc.returncode == 1 and "[ForceCheckHash]" in proc.stdout
    (configs / "board_defconfig").write_text("BR2_aarch64=y\nBR2_DOWNLOAD_FORCE_CHECK_HASHES=y\n")
    assert br_check(configs / "board_defconfig").returncode == 0


def test_shell_script_is_shellchecked(tmp_path: Path) -> None:
    script = tmp_path / "helper.sh"
    script.write_text('#!/bin/sh\necho "$1"\n')
    assert br_check(script).returncode == 0
    script.write_text("#!/bin/sh\nrm -rf $1/*\n")
    proc = br_check(script)
    assert proc.returncode == 1 and "[Shellcheck]" in proc.stdout


def test_patch_name_without_number(tmp_path: Path) -> None:
    bad = tmp_path / "fix.patch"
    bad.write_text("Upstream: no\nSigned-off-by: a <a@b>\n")
    proc = br_check(bad)
    assert proc.returncode == 1 and "[ApplyOrder]" in proc.stdout


def test_missing_path_is_one_sentence() -> None:
    proc = br_check(ROOT / "no-such-tree")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ Rockchip: one source with the layer

LAYER = ROOT / "meta-npu"
RKNN_INC = LAYER / "recipes-runtime" / "rknpu2" / "rknn-toolkit2.inc"
BOARD = TREE / "board"
FRAGMENTS = sorted(BOARD.rglob("*.config"))
# KERNEL_DEVICETREE of JeffyCN/meta-rockchip walnascar f5acd79b conf/machine/rockchip-<soc>-evb.conf:
# this tree's board trees carry the same names.
BOARD_TREES = {"rk3588": "rk3588-evb1-lp4-v10-linux.dts", "rk3576": "rk3576-evb1-v10-linux.dts"}


def fragment_values(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text().splitlines():
        m = re.match(r"(BR2_\w+)=(.*)$", line)
        if m:
            values[m.group(1)] = m.group(2).strip('"')
    return values


def expand(value: str) -> list[Path]:
    """The paths of this repository a fragment value names (through $(BR2_EXTERNAL_NPU_PATH))."""
    return [
        Path(word.replace("$(BR2_EXTERNAL_NPU_PATH)", str(TREE))).resolve()
        for word in value.split()
        if word.startswith("$(BR2_EXTERNAL_NPU_PATH)")
    ]


@pytest.mark.parametrize("fragment", FRAGMENTS, ids=lambda p: str(p.relative_to(TREE)))
def test_fragment_names_its_base_and_only_existing_files(fragment: Path) -> None:
    text = fragment.read_text()
    assert re.search(r"^# base defconfig: \S", text, re.M), f"{fragment.name} names no base defconfig"
    for value in fragment_values(fragment).values():
        for path in expand(value):
            assert path.exists(), f"{fragment.relative_to(TREE)} names {path}, which does not exist"


def test_base_defconfigs_of_this_tree_exist() -> None:
    for fragment in FRAGMENTS:
        m = re.search(r"^# base defconfig: (.+)$", fragment.read_text(), re.M)
        for name in (w.strip() for w in m.group(1).split(",")):
            if name.startswith("rockchip_"):
                assert (TREE / "configs" / name).is_file(), name


def test_vendor_route_merges_the_layers_rknpu_fragment() -> None:
    values = fragment_values(BOARD / "rockchip" / "rknpu.config")
    (cfg,) = expand(values["BR2_LINUX_KERNEL_CONFIG_FRAGMENT_FILES"])
    assert cfg == (LAYER / "dynamic-layers/rockchip/recipes-kernel/linux/files/rknpu.cfg").resolve()
    assert values["BR2_LINUX_KERNEL_CUSTOM_TARBALL_LOCATION"] in (TREE / "external.mk").read_text()
    assert "# BR2_DOWNLOAD_FORCE_CHECK_HASHES is not set" in (BOARD / "rockchip" / "rknpu.config").read_text()


def test_mainline_route_keeps_rock5b_fragment_and_adds_the_layers_rocket_fragment() -> None:
    values = fragment_values(BOARD / "rock5b" / "npu.config")
    words = values["BR2_LINUX_KERNEL_CONFIG_FRAGMENT_FILES"].split()
    assert words[0] == "board/radxa/rock5b/linux.fragment"
    assert expand(words[1]) == [(LAYER / "recipes-kernel/linux/files/rocket.cfg").resolve()]
    version = values["BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE"]
    assert tuple(int(x) for x in version.split(".")[:2]) >= (6, 18)
    assert f"  linux-{version}.tar.xz" in (BOARD / "rock5b" / "linux.hash").read_text()


@pytest.mark.parametrize("soc", SOCS.values(), ids=lambda s: s.name)
def test_board_fragment_wraps_the_machines_tree_with_the_layers_sram(soc: Soc) -> None:
    values = fragment_values(BOARD / "rockchip" / f"{soc.name}-evb" / "npu.config")
    assert values["BR2_NPU_RKNN_SOC"] == soc.name.upper()
    wrapper, dtsi = expand(values["BR2_LINUX_KERNEL_CUSTOM_DTS_PATH"])
    assert dtsi == soc.fragment.resolve()
    assert wrapper.name == BOARD_TREES[soc.name] == Path(soc.board_dtb).name.replace(".dtb", ".dts")
    text = wrapper.read_text()
    assert f'#include "{soc.board_dtb.replace(".dtb", ".dts")}"' in text
    assert f'#include "{soc.fragment.name}"' in text
    base = (TREE / "configs" / f"rockchip_{soc.name}_evb_defconfig").read_text()
    assert f'BR2_NPU_ROCKCHIP_BOARD="rockchip-{soc.name}-evb"' in base


@pytest.mark.parametrize("soc", SOCS.values(), ids=lambda s: s.name)
def test_installed_board_tree_gives_the_npu_its_sram(soc: Soc, tmp_path: Path) -> None:
    # Buildroot copies BR2_LINUX_KERNEL_CUSTOM_DTS_PATH into arch/arm64/boot/dts/ and builds the
    # .dts there; the kernel's dtc_cpp rule adds no -I for it, so the includes must resolve alone.
    tree, _ = make_kernel_tree(tmp_path, soc)
    dts_dir = tree / "arch" / "arm64" / "boot" / "dts"
    values = fragment_values(BOARD / "rockchip" / f"{soc.name}-evb" / "npu.config")
    for path in expand(values["BR2_LINUX_KERNEL_CUSTOM_DTS_PATH"]):
        shutil.copy(path, dts_dir)
    wrapper = dts_dir / BOARD_TREES[soc.name]
    pre, dtb = tmp_path / "board.pre.dts", tmp_path / "board.dtb"
    cpp = [tool("cpp"), "-nostdinc", "-undef", "-D__DTS__", "-x", "assembler-with-cpp", "-P", "-o", str(pre)]
    subprocess.run([*cpp, str(wrapper)], check=True)
    subprocess.run([tool("dtc"), "-I", "dts", "-O", "dtb", "-o", str(dtb), str(pre)], check=True)
    assert check_npu_sram(dtb, soc).size == soc.expected_bytes


def test_rknn_packages_build_the_yocto_pin() -> None:
    inc = RKNN_INC.read_text()
    assert re.search(rf'^SRCREV = "{mk_value("librknnrt", "LIBRKNNRT_COMMIT")}"', inc, re.M)
    assert re.search(rf'^RKNN_SDK_VERSION = "{mk_value("librknnrt", "LIBRKNNRT_VERSION")}"', inc, re.M)
    for pkg in ("rknn-server", "rknn-mobilenet-demo", "rknn-yolov5-demo"):
        upper = pkg.replace("-", "_").upper()
        assert mk_value(pkg, f"{upper}_SOURCE") == "$(LIBRKNNRT_SOURCE)"
        assert mk_value(pkg, f"{upper}_REDISTRIBUTE") == "NO"
    license_md5 = re.search(r'LIC_FILES_CHKSUM = "file://LICENSE;md5=([0-9a-f]{32})"', inc).group(1)
    assert license_md5 == "a2399e2538b7ebeac89b5b1cc648459a"


def test_systemd_unit_is_the_layers_and_restarts_on_failure() -> None:
    mk = (TREE / "package" / "rknn-server" / "rknn-server.mk").read_text()
    assert "$(NPU_LAYER_RKNPU2_FILES)/rknn-server.service" in mk
    unit = LAYER / "recipes-runtime" / "rknpu2" / "files" / "rknn-server.service"
    assert re.search(r"^Restart=on-failure$", unit.read_text(), re.M)


def test_layer_directories_of_external_mk_exist() -> None:
    text = (TREE / "external.mk").read_text()
    for name, rel in re.findall(r"^(NPU_LAYER_\w+) = \$\(NPU_LAYER\)/(\S+)$", text, re.M):
        assert (LAYER / rel).is_dir(), f"{name}: meta-npu/{rel} does not exist"
    for pkg, patch in (
        ("rknn-mobilenet-demo", "rknn_mobilenet_demo"),
        ("rknn-yolov5-demo", "rknn_yolov5_demo"),
    ):
        assert "$(NPU_LAYER_RKNN_DEMOS_FILES)" in (TREE / "package" / pkg / f"{pkg}.mk").read_text()
        assert list(
            (LAYER / "dynamic-layers/rockchip/recipes-npu/rknn-demos/files").glob(f"0001-{patch}-*.patch")
        )


def test_licence_opt_in_is_only_in_its_own_fragment() -> None:
    setters = [f for f in FRAGMENTS if "BR2_NPU_ACCEPT_ROCKCHIP_RKNN_LICENSE=y" in f.read_text()]
    assert setters == [BOARD / "rockchip" / "accept-rknn-license.config"]
    for defconfig in (TREE / "configs").iterdir():
        assert "ACCEPT" not in defconfig.read_text()
    assert "THIS IS A LEGAL ACT" in setters[0].read_text()


# ------------------------------------------------------------------ recipes and make-time checks in real make

# Buildroot's helpers that external.mk and the recipes use, with Buildroot's meaning.
BR_HELPERS = """
qstrip = $(strip $(subst ",,$(1)))
UPPERCASE = $(shell printf '%s' '$(1)' | tr 'a-z' 'A-Z')
define sep


endef
"""
TARBALL = re.search(r"^NPU_RK_BSP_KERNEL_TARBALL = (\S+)$", (TREE / "external.mk").read_text(), re.M).group(1)
VENDOR_OK = {
    "BR2_NPU_RKNPU_BSP_KERNEL": "y",
    "BR2_NPU_ROCKCHIP_BOARD": '"rockchip-rk3588-evb"',
    "BR2_NPU_RKNN_SOC": '"RK3588"',
    "BR2_LINUX_KERNEL": "y",
    "BR2_LINUX_KERNEL_CUSTOM_TARBALL": "y",
    "BR2_LINUX_KERNEL_CUSTOM_TARBALL_LOCATION": f'"{TARBALL}"',
    "BR2_PACKAGE_LIBRKNNRT": "y",
    "BR2_NPU_ACCEPT_ROCKCHIP_RKNN_LICENSE": "y",
    "BR2_aarch64": "y",
}
ROCKET_OK = {
    "BR2_NPU_ROCKET": "y",
    "BR2_aarch64": "y",
    "BR2_LINUX_KERNEL": "y",
    "BR2_LINUX_KERNEL_CUSTOM_VERSION": "y",
    "LINUX_VERSION": "6.18.39",
    "BR2_PACKAGE_MESA3D_TEFLON": "y",
}


def make_external(
    tmp: Path, values: dict[str, str], body: str = "all: ; @echo ok\n"
) -> subprocess.CompletedProcess[str]:
    """Real make over external.mk with Buildroot's variables for a configuration (BR_BUILDING=y)."""
    defaults = {"BR2_VERSION": "2025.02.16", "BR_BUILDING": "y", "PYTHON3_VERSION_MAJOR": "3.12"}
    settings = "".join(f"{k} = {v}\n" for k, v in {**defaults, **values}.items())
    makefile = tmp / "Makefile"
    makefile.write_text(
        f"BR2_EXTERNAL_NPU_PATH = {TREE}\n{BR_HELPERS}{settings}include {TREE}/external.mk\n{body}"
    )
    return subprocess.run(["make", "-f", str(makefile)], capture_output=True, text=True, check=False, cwd=tmp)


def stop_sentence(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if "***" in line]
    assert len(lines) == 1, proc.stderr
    return lines[0].split("*** ", 1)[1]


@pytest.mark.parametrize("values", [VENDOR_OK, ROCKET_OK, {}], ids=["vendor", "rocket", "cv18xx"])
def test_make_time_checks_pass_a_right_configuration(values: dict[str, str], tmp_path: Path) -> None:
    proc = make_external(tmp_path, values)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


BAD_INPUT = {
    "vendor fragment on rock5b_defconfig": (
        {**VENDOR_OK, "BR2_NPU_ROCKCHIP_BOARD": '""'},
        "needs one of this tree's base defconfigs",
    ),
    "licence not accepted": (
        {**VENDOR_OK, "BR2_NPU_ACCEPT_ROCKCHIP_RKNN_LICENSE": ""},
        "proprietary licence",
    ),
    "board fragment of the other SoC": (
        {**VENDOR_OK, "BR2_NPU_RKNN_SOC": '"RK3576"'},
        "board/rockchip/rk3588-evb/npu.config",
    ),
    "another kernel on the vendor route": (
        {**VENDOR_OK, "BR2_LINUX_KERNEL_CUSTOM_TARBALL": "", "LINUX_VERSION": "6.12.4"},
        "needs Rockchip's BSP kernel",
    ),
    "mainline fragment on an EVB defconfig": (
        {**ROCKET_OK, "BR2_NPU_ROCKCHIP_BOARD": '"rockchip-rk3588-evb"'},
        "needs a mainline base",
    ),
    "mainline fragment without a kernel": (
        {**ROCKET_OK, "BR2_LINUX_KERNEL": ""},
        "needs an aarch64 base that builds a kernel",
    ),
    "kernel older than 6.18": ({**ROCKET_OK, "LINUX_VERSION": "6.12.4"}, "needs Linux 6.18 or later"),
    "Buildroot older than 2025.02 for Rockchip": (
        {**ROCKET_OK, "BR2_VERSION": "2024.11.3"},
        "need Buildroot 2025.02 or later",
    ),
    "Buildroot older than 2024.02": ({"BR2_VERSION": "2023.02.10"}, "needs Buildroot 2024.02 or later"),
    "LiteRT wheel on another Python": (
        {"BR2_PACKAGE_PYTHON_AI_EDGE_LITERT": "y", "PYTHON3_VERSION_MAJOR": "3.11"},
        "has wheels for CPython 3.12 3.13 3.14 only, but this Buildroot's python3 is 3.11",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUT))
def test_bad_input_stops_make_with_one_sentence(case: str, tmp_path: Path) -> None:
    values, wanted = BAD_INPUT[case]
    sentence = stop_sentence(make_external(tmp_path, values))
    assert wanted in sentence, sentence
    assert sentence.endswith("Stop.") and "Traceback" not in sentence


def fake_rknn_sdk(build: Path, runtime: str, server: str) -> None:
    """The SDK files the recipes install, with the version strings Rockchip's binaries carry."""
    api = build / "rknpu2" / "runtime" / "Linux" / "librknn_api"
    (api / "aarch64").mkdir(parents=True)
    (api / "aarch64" / "librknnrt.so").write_bytes(
        b"\x7fELF\0" + f"librknnrt version: {runtime} (test)\0".encode()
    )
    (api / "include").mkdir()
    for header in ("rknn_api.h", "rknn_custom_op.h", "rknn_matmul_api.h"):
        (api / "include" / header).write_text("/* test */\n")
    bin_dir = build / "rknpu2" / "runtime" / "Linux" / "rknn_server" / "aarch64" / "usr" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "rknn_server").write_bytes(b"\x7fELF\0" + f"rknn_server version: {server} (test)\0".encode())
    for script in ("start_rknn.sh", "restart_rknn.sh"):
        (bin_dir / script).write_text("#!/bin/sh\n")


RECIPES = """
INSTALL = install
STAGING_DIR = {tmp}/staging
TARGET_DIR = {tmp}/target
all: {tmp}/build/.stamp_server
{tmp}/build/.stamp_runtime:
\t$(LIBRKNNRT_INSTALL_STAGING_CMDS)
\t$(LIBRKNNRT_INSTALL_TARGET_CMDS)
{tmp}/build/.stamp_server: {tmp}/build/.stamp_runtime
\t$(RKNN_SERVER_INSTALL_TARGET_CMDS)
"""


def test_runtime_and_server_of_one_release_are_installed(tmp_path: Path) -> None:
    fake_rknn_sdk(tmp_path / "build", "2.3.2", "2.3.2")
    proc = make_external(tmp_path, {"BR_BUILDING": ""}, RECIPES.format(tmp=tmp_path))
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / "target"
    assert (target / "usr" / "lib" / "librknnrt.so").is_file()
    assert os.access(target / "usr" / "bin" / "rknn_server", os.X_OK)
    assert (tmp_path / "staging" / "usr" / "include" / "rknn_api.h").is_file()


@pytest.mark.parametrize(
    ("runtime", "server", "name"), [("2.3.2", "2.3.1", "rknn_server"), ("2.3.0", "2.3.2", "librknnrt")]
)
def test_runtime_and_server_of_different_releases_stop_the_build(
    runtime: str, server: str, name: str, tmp_path: Path
) -> None:
    fake_rknn_sdk(tmp_path / "build", runtime, server)
    proc = make_external(tmp_path, {"BR_BUILDING": ""}, RECIPES.format(tmp=tmp_path))
    assert proc.returncode == 2
    (sentence,) = [line for line in proc.stderr.splitlines() if line.startswith("rknn-version-check:")]
    assert f"is {name} {runtime if name == 'librknnrt' else server} but 2.3.2 is expected" in sentence
    assert not (tmp_path / "target" / "usr" / "bin" / "rknn_server").exists()


# ------------------------------------------------------------------ rknn_server under BusyBox/SysV init


def pids_of(exe: Path) -> list[int]:
    """Processes running the program EXE (by /proc/PID/exe)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if Path(os.readlink(proc / "exe")) == exe:
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def pids_running(script: Path) -> list[int]:
    """Processes whose command line runs SCRIPT (a shell running it)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if str(script).encode() in (proc / "cmdline").read_bytes().split(b"\0"):
                    found.append(int(proc.name))
            except OSError:
                continue
    return found


def wait_for(predicate: Callable[[], bool], timeout: float = 8.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def supervision_fault(tmp: Path, loop_body: str) -> str | None:
    """Start S95rknn_server under start-stop-daemon with LOOP_BODY as the SDK's start_rknn.sh,
    kill the server, stop the service: the first thing that goes wrong, or None."""
    tool("start-stop-daemon")
    bin_dir, run_dir = tmp / "bin", tmp / "run"
    bin_dir.mkdir()
    run_dir.mkdir()
    server = bin_dir / "rknn_server"
    shutil.copy(shutil.which("sleep"), server)
    loop = bin_dir / "start_rknn.sh"
    loop.write_text("#!/bin/sh\n" + loop_body.replace("SERVER", f'"{server}" 600'))
    loop.chmod(0o755)
    script = tmp / "S95rknn_server"
    text = (TREE / "package" / "rknn-server" / "S95rknn_server").read_text()
    script.write_text(text.replace("/var/run/", f"{run_dir}/").replace("/usr/bin/", f"{bin_dir}/"))
    try:
        started = subprocess.run(["sh", str(script), "start"], capture_output=True, text=True, check=False)
        if started.stdout != "Starting rknn_server: OK\n" or not wait_for(lambda: len(pids_of(server)) == 1):
            return f"start: {started.stdout!r}, rknn_server not running"
        first = pids_of(server)[0]
        os.kill(first, signal.SIGKILL)
        if not wait_for(lambda: pids_of(server) not in ([], [first])):
            return "rknn_server was not restarted"
        stopped = subprocess.run(["sh", str(script), "stop"], capture_output=True, text=True, check=False)
        if stopped.stdout != "Stopping rknn_server: OK\n" or not wait_for(lambda: not pids_of(server)):
            return f"stop: {stopped.stdout!r}, rknn_server survived"
        time.sleep(1.5)
        if pids_of(server) or (run_dir / "rknn_server.pid").exists():
            return "the loop survived stop"
        return None
    finally:
        for pid in pids_running(loop) + pids_of(server):
            os.kill(pid, signal.SIGKILL)


# The behaviour of the RKNN SDK's start_rknn.sh: run the server again a second after it exits.
SDK_LOOP = "while true\ndo\n  sleep 1\n  SERVER\ndone\n"


def test_init_script_restarts_rknn_server_and_stops_it(tmp_path: Path) -> None:
    assert supervision_fault(tmp_path, SDK_LOOP) is None


def test_a_start_without_the_loop_is_not_supervised(tmp_path: Path) -> None:
    assert supervision_fault(tmp_path, "exec SERVER\n") == "rknn_server was not restarted"


# ------------------------------------------------------------------ what the images give the profiles

MEDIAPIPE_FILES = LAYER / "recipes-models" / "npu-model-mediapipe-rknn" / "files"
VERIFY = TREE / "package" / "npu-model-mediapipe-rknn" / "verify-rknn-models.py"


def mediapipe_build(tmp: Path) -> Path:
    """The package's build directory after its extract step: the wheel's models, the layer's files."""
    from models import FACE_DETECTION, FACE_LANDMARK, model_path

    build = tmp / "build"
    for model in (FACE_DETECTION, FACE_LANDMARK):
        target = build / model.member
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(model_path(model), target)
    shutil.copytree(MEDIAPIPE_FILES, build / "rknn")
    return build


def verify(build: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VERIFY), str(build / "rknn"), str(build)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_model_files_are_verified_against_their_manifest(tmp_path: Path) -> None:
    build = mediapipe_build(tmp_path)
    assert verify(build).returncode == 0
    golden = build / "rknn" / "rk3588" / "face_landmark.out1.npy"
    golden.write_bytes(golden.read_bytes()[:-1] + b"\0")
    proc = verify(build)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1
    assert f"{golden} has sha256" in proc.stderr and "scripts/make-rknn-models --update" in proc.stderr
    golden.unlink()
    assert "is missing" in verify(build).stderr


INSTALL = """
INSTALL = install
NPU_MODEL_MEDIAPIPE_RKNN_PKGDIR = {pkgdir}
HOST_DIR = {host}
TARGET_DIR = {tmp}/target
all: {build}/.stamp
{build}/.stamp:
\t$(NPU_MODEL_MEDIAPIPE_RKNN_VERIFY)
\t$(NPU_MODEL_MEDIAPIPE_RKNN_INSTALL_TARGET_CMDS)
"""


def profile_paths(name: str) -> set[str]:
    import yaml

    profile = yaml.safe_load((ROOT / "src" / "npu_accept" / "profiles" / f"{name}.yaml").read_text())
    paths = {m["path"] for m in profile["models"]} | {
        m["reference"] for m in profile["models"] if m.get("reference")
    }
    for role in ("runtime", "daemon", "delegate"):
        if profile.get(role):
            paths.add(profile[role]["path"])
    return paths


@pytest.mark.parametrize("board", ["rk3588-evb", "rk3576-evb"])
def test_vendor_image_installs_what_the_profile_runs(board: str, tmp_path: Path) -> None:
    build = mediapipe_build(tmp_path)
    host = tmp_path / "host"
    (host / "bin").mkdir(parents=True)
    (host / "bin" / "python3").symlink_to(sys.executable)
    proc = make_external(
        tmp_path,
        {"BR_BUILDING": ""},
        INSTALL.format(tmp=tmp_path, build=build, host=host, pkgdir=VERIFY.parent),
    )
    assert proc.returncode == 0, proc.stderr
    fake_rknn_sdk(build, "2.3.2", "2.3.2")
    proc = make_external(
        tmp_path, {"BR_BUILDING": ""}, RECIPES.format(tmp=build.parent).replace("/build/", "/build/")
    )
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / "target"
    missing = sorted(p for p in profile_paths(board) if not (target / p.lstrip("/")).is_file())
    assert not missing, f"the {board} profile needs {missing}, which the Buildroot packages do not install"


MAINLINE_INSTALL = """
INSTALL = install
TARGET_DIR = {tmp}/target
all: {tmp}/mesa/.stamp {tmp}/mobilenet/.stamp
{tmp}/mesa/.stamp:
\t$(MESA3D_TEFLON_INSTALL_TARGET_CMDS)
{tmp}/mobilenet/.stamp:
\t$(NPU_MODEL_MOBILENET_V1_QUANT_INSTALL_TARGET_CMDS)
"""


def test_mainline_image_installs_what_the_profile_runs(tmp_path: Path) -> None:
    # What Mesa's build (meson's buildroot-build directory) and the model archive leave behind.
    teflon = tmp_path / "mesa" / "buildroot-build" / "src" / "gallium" / "targets" / "teflon" / "libteflon.so"
    teflon.parent.mkdir(parents=True)
    teflon.write_bytes(b"\x7fELF")
    (tmp_path / "mobilenet").mkdir()
    (tmp_path / "mobilenet" / "mobilenet_v1_1.0_224_quant.tflite").write_bytes(b"TFL3")
    proc = make_external(tmp_path, {"BR_BUILDING": ""}, MAINLINE_INSTALL.format(tmp=tmp_path))
    assert proc.returncode == 0, proc.stderr
    target = tmp_path / "target"
    missing = sorted(p for p in profile_paths("rock-5b") if not (target / p.lstrip("/")).is_file())
    assert not missing, f"the rock-5b profile needs {missing}, which the Buildroot packages do not install"
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == [
        "usr/lib/libteflon.so",
        "usr/share/npu-models/mobilenet_v1_1.0_224_quant.tflite",
    ]


MANIFEST = """
NPU_RUN_PKGDIR = {pkgdir}
HOST_DIR = {host}
TARGET_DIR = {tmp}/target
LINUX_VERSION_PROBED = 6.18.39
all: ; $(NPU_RUN_WRITE_MANIFEST)
"""


@pytest.mark.parametrize(
    ("values", "family", "roles"),
    [
        (
            {**ROCKET_OK, "BR2_TARGET_GENERIC_HOSTNAME": '"rock5b"'},
            "rocket",
            {"driver": ("linux", "6.18.39"), "delegate": ("mesa3d-teflon", "26.0.5"), "daemon": None},
        ),
        (
            VENDOR_OK,
            "rknpu",
            {
                "driver": ("linux", None),
                "runtime": ("librknnrt", "2.3.2"),
                "daemon": ("rknn-server", "2.3.2"),
            },
        ),
    ],
    ids=["rocket", "rknpu"],
)
def test_image_gets_the_build_manifest_the_suite_reads(
    values: dict[str, str], family: str, roles: dict, tmp_path: Path
) -> None:
    from npu_accept.checks.base import same_version

    host = tmp_path / "host"
    (host / "bin").mkdir(parents=True)
    (host / "bin" / "python3").symlink_to(sys.executable)
    model = tmp_path / "target" / "usr" / "share" / "npu-models" / "m.tflite"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"TFL3")
    body = MANIFEST.format(pkgdir=TREE / "package" / "npu-run", host=host, tmp=tmp_path)
    proc = make_external(tmp_path, {**values, "BR_BUILDING": ""}, body)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads(
        (tmp_path / "target" / "usr" / "share" / "meta-npu" / "build-manifest.json").read_text()
    )
    assert manifest["schema"] == "npu-build-manifest/1" and manifest["npu_family"] == family
    assert manifest["kernel"] == {"recipe": "linux", "version": "6.18.39", "srcrev": None}
    for role, wanted in roles.items():
        got = manifest[role] and (manifest[role]["recipe"], manifest[role]["version"])
        assert got == wanted, role
    assert manifest["models"] == [
        {"path": "/usr/share/npu-models/m.tflite", "sha256": hashlib.sha256(b"TFL3").hexdigest()}
    ]
    if family == "rocket":  # npu-info reports the kernel release as Rocket's version
        assert same_version(manifest["driver"]["version"], "6.18.39")


# ------------------------------------------------ flake8, as Buildroot's check-package runs it


def flake8_limit_problems(tree: Path, ruff_limit: int) -> list[str]:
    """buildroot/.flake8 gives Buildroot's Flake8 check (utils/checkpackagelib/tool.py runs flake8
    on every .py, reading the configuration of the directory it runs in) the limit ruff formats to;
    flake8's default is 79, which these files exceed."""
    import configparser

    conf = configparser.ConfigParser()
    if not conf.read(tree / ".flake8"):
        return [f"{tree.name}/.flake8 is missing: Buildroot's check-package would apply flake8's 79 columns."]
    limit = conf.getint("flake8", "max-line-length", fallback=79)
    problems = (
        [] if limit == ruff_limit else [f".flake8 allows {limit} columns, ruff formats to {ruff_limit}."]
    )
    for path in sorted(tree.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if len(line) > limit:
                problems.append(f"{path.relative_to(tree)}:{number}: {len(line)} > {limit} columns (E501).")
    return problems


def ruff_line_length() -> int:
    import tomllib

    return tomllib.loads((TREE.parent / "pyproject.toml").read_text())["tool"]["ruff"]["line-length"]


def test_the_external_tree_gives_flake8_the_projects_line_length() -> None:
    assert flake8_limit_problems(TREE, ruff_line_length()) == []


def test_a_tree_without_flake8_settings_or_with_a_long_line_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    assert "missing" in flake8_limit_problems(tmp_path, 110)[0]
    (tmp_path / ".flake8").write_text("[flake8]\nmax-line-length = 110\n")
    assert flake8_limit_problems(tmp_path, 110) == []
    (tmp_path / "a.py").write_text("x = '" + "y" * 110 + "'\n")
    assert flake8_limit_problems(tmp_path, 110) == ["a.py:1: 116 > 110 columns (E501)."]
