# SPDX-License-Identifier: MIT
"""The CV18xx BR2_EXTERNAL tree (buildroot/) and scripts/br-check-package, which checks it.

br-check-package re-implements Buildroot's check-package rules (Buildroot is not in CI); every
rule the tree relies on is shown to fire on a broken copy of the tree and to stay quiet on the
real one. The pins of the Buildroot packages are the same commits as the Yocto recipes'.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

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
