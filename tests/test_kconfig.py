# SPDX-License-Identifier: MIT
"""The root Kconfig for `kas menu`: loaded with kconfiglib, saved by kas's own menu plugin code.

scripts/kas-menu-config drives exactly what `kas menu` does on "Save" (Menu.save_config), so
these tests see the .config.yaml a user would get.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import kconfiglib
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
KCONFIG = ROOT / "Kconfig"
MENU_CONFIG = ROOT / "scripts" / "kas-menu-config"


def boards() -> list[str]:
    kconf = kconfiglib.Kconfig(str(KCONFIG), warn_to_stderr=False)
    return [sym.name for sym in kconf.named_choices["BOARD"].syms]


def menu_config(
    tmp_path: Path, *options: str, kconfig: Path = KCONFIG
) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / ".config.yaml"
    proc = subprocess.run(
        [sys.executable, str(MENU_CONFIG), "--kconfig", str(kconfig), "--output", str(out), *options],
        capture_output=True,
        text=True,
        check=False,
    )
    return proc, out


def test_kconfig_loads_without_warnings() -> None:
    kconf = kconfiglib.Kconfig(str(KCONFIG), warn_to_stderr=False)
    assert kconf.warnings == []
    assert kconf.syms["KAS_BUILD_SYSTEM"].str_value == "openembedded"


def test_every_board_includes_an_existing_kas_file() -> None:
    kconf = kconfiglib.Kconfig(str(KCONFIG), warn_to_stderr=False)
    for board in boards():
        kconf.syms[board].set_value("y")
        includes = [
            s.str_value
            for s in kconf.unique_defined_syms
            if s.name.startswith("KAS_INCLUDE_") and s.str_value
        ]
        assert len(includes) == 1, f"{board}: {includes}"
        assert (ROOT / includes[0]).is_file(), f"{board}: {includes[0]} does not exist"


def test_every_kas_entry_point_is_a_board() -> None:
    kconf = kconfiglib.Kconfig(str(KCONFIG), warn_to_stderr=False)
    offered = {
        d[0].str_value
        for s in kconf.unique_defined_syms
        if s.name.startswith("KAS_INCLUDE_BOARD")
        for d in s.defaults
    }
    entries = {
        f"kas/{p.name}"
        for p in (ROOT / "kas").glob("*.yml")
        if p.name != "base.yml" and not p.name.endswith(".lock.yml")
    }
    assert entries <= offered, f"not in Kconfig: {sorted(entries - offered)}"


@pytest.mark.parametrize("board", boards())
def test_saved_configuration_is_a_valid_kas_file(tmp_path: Path, board: str) -> None:
    from kas.includehandler import ConfigFile

    proc, out = menu_config(tmp_path, board)
    assert proc.returncode == 0, proc.stderr
    config = yaml.safe_load(out.read_text())
    assert config["menu_configuration"][board] is True
    assert config["target"] == ["npu-image"]
    for include in config["header"]["includes"]:
        assert (ROOT / include).is_file()
    ConfigFile.load(str(out))  # kas's own schema check of what it saved


def test_eula_is_off_unless_chosen(tmp_path: Path) -> None:
    proc, out = menu_config(tmp_path, "BOARD_IMX95_VERDIN")
    assert proc.returncode == 0, proc.stderr
    assert "kas/opt/accept-fsl-eula.yml" not in yaml.safe_load(out.read_text())["header"]["includes"]


def test_options_add_their_fragments(tmp_path: Path) -> None:
    proc, out = menu_config(tmp_path, "BOARD_IMX95_VERDIN", "OPT_ACCEPT_FSL_EULA", "OPT_CI")
    assert proc.returncode == 0, proc.stderr
    includes = yaml.safe_load(out.read_text())["header"]["includes"]
    assert sorted(includes) == ["kas/imx95-verdin.yml", "kas/opt/accept-fsl-eula.yml", "kas/opt/ci.yml"]
    # no hidden helper symbol leaks into local.conf
    assert "local_conf_header" not in yaml.safe_load(out.read_text())


def test_unknown_option_is_one_sentence(tmp_path: Path) -> None:
    proc, out = menu_config(tmp_path, "BOARD_IMX95_VERDIN", "OPT_TURBO")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("kas-menu-config: unknown option OPT_TURBO: choose from ")
    assert "BOARD_IMX95_VERDIN" in lines[0] and "OPT_CI" in lines[0]
    assert not out.exists()


def test_hidden_symbol_is_not_an_option(tmp_path: Path) -> None:
    proc, _ = menu_config(tmp_path, "KAS_INCLUDE_OPT_CI=kas/evil.yml")
    assert proc.returncode == 1
    assert "unknown option KAS_INCLUDE_OPT_CI" in proc.stderr


def test_option_the_board_does_not_offer_is_refused(tmp_path: Path) -> None:
    kconfig = tmp_path / "Kconfig"
    kconfig.write_text(
        KCONFIG.read_text()
        + ('\nchoice BOARD\nconfig BOARD_TEST_NO_EULA\n\tbool "test board without NXP parts"\nendchoice\n')
    )
    proc, _ = menu_config(tmp_path, "BOARD_TEST_NO_EULA", "OPT_ACCEPT_FSL_EULA", kconfig=kconfig)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "kas-menu-config: option OPT_ACCEPT_FSL_EULA cannot be y with this selection (it "
        "depends on another option, e.g. a board that offers it); select that first or drop it."
    ]


def test_missing_kconfig_is_one_sentence(tmp_path: Path) -> None:
    proc, _ = menu_config(tmp_path, "BOARD_IMX95_VERDIN", kconfig=tmp_path / "nope")
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        f"kas-menu-config: {tmp_path / 'nope'} does not exist; pass the project's Kconfig with --kconfig."
    ]


def test_broken_kconfig_is_one_sentence(tmp_path: Path) -> None:
    kconfig = tmp_path / "Kconfig"
    kconfig.write_text('config FOO\n\tbool "foo"\nendchoice\n')
    proc, _ = menu_config(tmp_path, "FOO", kconfig=kconfig)
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "is not a valid Kconfig file" in proc.stderr
