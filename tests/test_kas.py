# SPDX-License-Identifier: MIT
"""The kas files: kas's own schema, includes, pins - via scripts/kas-check, and kas's loader.

Generic over every kas file in kas/ (all boards, all fragments). The bad-input cases copy the
real files into a scratch git repository and break one thing each.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
KAS_CHECK = ROOT / "scripts" / "kas-check"
KAS_FILES = sorted(p for p in (ROOT / "kas").rglob("*.yml"))
ENTRY_POINTS = sorted(
    p for p in (ROOT / "kas").glob("*.yml") if p.name != "base.yml" and not p.name.endswith(".lock.yml")
)


def kas_check(*args: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(KAS_CHECK), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def problems(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip()]


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A git repository holding a copy of kas/ (includes resolve against its root)."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    shutil.copytree(ROOT / "kas", tmp_path / "kas")
    return tmp_path


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_there_are_kas_files() -> None:
    names = {p.relative_to(ROOT / "kas").as_posix() for p in KAS_FILES}
    assert {
        "base.yml",
        "imx95-verdin.yml",
        "imx95-verdin-community.yml",
        "opt/accept-fsl-eula.yml",
        "opt/ci.yml",
    } <= names


@pytest.mark.parametrize("path", KAS_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_kas_file_passes_kas_check(path: Path) -> None:
    proc = kas_check(path.relative_to(ROOT))
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("path", KAS_FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_kas_own_loader_accepts_file(path: Path) -> None:
    """kas itself (schema + header version check) loads every file."""
    from kas.includehandler import ConfigFile

    ConfigFile.load(str(path))


@pytest.fixture
def kas_merge(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], dict[str, Any]]:
    """kas's own include handler: the merged configuration of an entry point."""
    from kas.context import create_global_context
    from kas.includehandler import IncludeHandler

    monkeypatch.chdir(ROOT)
    create_global_context(argparse.Namespace(no_color=True))  # kas runs git through it

    def merge(path: Path) -> dict[str, Any]:
        config, missing = IncludeHandler([str(path)], use_lock=False).get_config()
        assert not missing, f"{path.name}: includes from repos not defined: {missing}"
        return config

    return merge


@pytest.mark.parametrize("path", ENTRY_POINTS, ids=lambda p: p.name)
def test_entry_point_builds_npu_image_with_meta_npu(path: Path, kas_merge) -> None:
    config = kas_merge(path)
    assert config.get("machine"), f"{path.name} sets no machine"
    assert "npu-image" in ([config["target"]] if isinstance(config["target"], str) else config["target"])
    assert "url" not in (config["repos"]["meta-npu"] or {}), "meta-npu must be this repository"


def test_imx95_verdin_reproduces_nxp_manifest() -> None:
    """The pins of imx-6.12.49-2.2.0.xml (nxp-imx/imx-manifest 44b39993)."""
    repos = yaml.safe_load((ROOT / "kas" / "imx95-verdin.yml").read_text())["repos"]
    manifest = {
        "poky": "d0b46a6624ec9c61c47270745dd0b2d5abbe6ac1",
        "meta-openembedded": "07330a98cf93806b7a4e0170a541b94962ff3960",
        "meta-clang": "003cba92e982bdd565a6889f28799f8bba14957e",
        "meta-freescale": "3d2781ad200846183ee3f3391f49512d0ef1b529",
        "meta-freescale-3rdparty": "5ba0c7cfdba9bc7c4495f0cdf1c195f45b7164a6",
        "meta-freescale-distro": "b9c3536b68271c420fe5de36fc284781ceaa32ab",
        "meta-freescale-ml": "e55df3c0f515ba62fcc2cc4c8ddee80b99706a40",
        "meta-arm": "21894cc2ea3197e6bfc1a56d889f757a09dc8b31",
        "meta-qt6": "00c3bd954341a2a755fdee6b978af952f51793e7",
        "meta-security": "1f7eeb8e84811fa79b98f236ade42dc52d44cfc6",
        "meta-virtualization": "38008d99d5bedc7d9769b9e95e3d6019a2df1698",
    }
    assert {name: repos[name]["commit"] for name in manifest} == manifest
    for tagged in ("meta-imx", "meta-nxp-demo-experience", "meta-nxp-connectivity"):
        assert repos[tagged]["tag"] == "rel_imx_6.12.49_2.2.0"
    # meta-imx's setup script (newest readable: 14cea73451) no longer hooks in meta-chromium.
    assert "meta-browser" not in repos
    config = yaml.safe_load((ROOT / "kas" / "imx95-verdin.yml").read_text())
    assert config["machine"] == "imx95-19x19-verdin"
    assert config["distro"] == "fsl-imx-xwayland"


def test_no_kas_file_accepts_the_eula_except_the_opt_in() -> None:
    setters = [
        p.relative_to(ROOT).as_posix()
        for p in KAS_FILES
        if "ACCEPT_FSL_EULA"
        in "\n".join(line for line in p.read_text().splitlines() if not line.lstrip().startswith("#"))
    ]
    assert setters == ["kas/opt/accept-fsl-eula.yml"]


def test_no_kas_file_hard_codes_dl_or_sstate_dir() -> None:
    for path in KAS_FILES:
        for line in path.read_text().splitlines():
            code = line.split("#", 1)[0]
            assert not any(f"{v} =" in code or f"{v} ?=" in code for v in ("DL_DIR", "SSTATE_DIR")), (
                f"{path}: {line.strip()}"
            )


def test_ci_fragment_takes_caches_from_environment() -> None:
    config = yaml.safe_load((ROOT / "kas" / "opt" / "ci.yml").read_text())
    assert "DL_DIR" in config["env"] and "SSTATE_DIR" in config["env"]
    block = "\n".join(config["local_conf_header"].values())
    assert "rm_work" in block and "BB_GENERATE_MIRROR_TARBALLS" in block
    assert "OEEquivHash" in block and "BB_HASHSERVE" in config["env"]


# --- bad input: each breaks one thing and must give one sentence naming the fix ---------------


def test_unpinned_repo_fails(scratch: Path) -> None:
    edit(
        scratch / "kas" / "imx95-verdin-community.yml",
        "    commit: 1d54d1c4736a114e1cecbe85a0306e3814d5ce70\n",
        "",
    )
    proc = kas_check("kas/imx95-verdin-community.yml", cwd=scratch)
    assert proc.returncode == 1
    assert problems(proc) == [
        "kas-check: kas/imx95-verdin-community.yml: repo 'poky' is not pinned; add `commit:` "
        "with the full 40-hex id read from upstream and the `branch:` that contains it."
    ]


def test_short_commit_fails(scratch: Path) -> None:
    edit(
        scratch / "kas" / "imx95-verdin-community.yml",
        "commit: 1d54d1c4736a114e1cecbe85a0306e3814d5ce70",
        "commit: 1d54d1c4",
    )
    proc = kas_check("kas/imx95-verdin-community.yml", cwd=scratch)
    assert proc.returncode == 1
    assert len(problems(proc)) == 1 and "not a full 40-hex" in proc.stderr


def test_commit_without_branch_fails(scratch: Path) -> None:
    edit(
        scratch / "kas" / "imx95-verdin-community.yml",
        "    branch: scarthgap\n    commit: 1d54d1c4736a114e1cecbe85a0306e3814d5ce70",
        "    commit: 1d54d1c4736a114e1cecbe85a0306e3814d5ce70",
    )
    proc = kas_check("kas/imx95-verdin-community.yml", cwd=scratch)
    assert proc.returncode == 1
    assert len(problems(proc)) == 1 and "add `branch:`" in proc.stderr


def test_tag_only_pin_fails_when_commit_required() -> None:
    assert kas_check("kas/imx95-verdin.yml").returncode == 0
    proc = kas_check("--require-commit", "kas/imx95-verdin.yml")
    assert proc.returncode == 1
    assert all("pinned by tag" in line and "kas lock" in line for line in problems(proc))


def test_missing_include_fails(scratch: Path) -> None:
    edit(scratch / "kas" / "imx95-verdin-community.yml", "- kas/base.yml", "- kas/basis.yml")
    proc = kas_check("kas/imx95-verdin-community.yml", cwd=scratch)
    assert proc.returncode == 1
    assert "includes kas/basis.yml, which does not exist" in proc.stderr
    assert "fix the path" in proc.stderr


def test_include_cycle_fails(scratch: Path) -> None:
    edit(
        scratch / "kas" / "base.yml",
        "header:\n  version: 23\n",
        "header:\n  version: 23\n  includes:\n    - kas/imx95-verdin-community.yml\n",
    )
    proc = kas_check("kas/imx95-verdin-community.yml", cwd=scratch)
    assert proc.returncode == 1
    assert "in a cycle" in proc.stderr


def test_schema_violation_fails(scratch: Path) -> None:
    edit(scratch / "kas" / "opt" / "ci.yml", "header:\n  version: 23", "header:\n  version: 99")
    proc = kas_check("kas/opt/ci.yml", cwd=scratch)
    assert proc.returncode == 1
    assert problems(proc)[0].startswith("kas-check: kas/opt/ci.yml: at header/version:")


def test_unknown_key_fails(scratch: Path) -> None:
    edit(scratch / "kas" / "opt" / "ci.yml", "env:", "environment:")
    proc = kas_check("kas/opt/ci.yml", cwd=scratch)
    assert proc.returncode == 1
    assert "'environment' was unexpected" in proc.stderr


def test_missing_schema_comment_fails(scratch: Path) -> None:
    path = scratch / "kas" / "opt" / "ci.yml"
    path.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    proc = kas_check("kas/opt/ci.yml", cwd=scratch)
    assert proc.returncode == 1
    assert "schema comment" in proc.stderr


def test_not_yaml_fails(scratch: Path) -> None:
    (scratch / "kas" / "opt" / "broken.yml").write_text("header: [version: 23\n")
    proc = kas_check("kas/opt/broken.yml", cwd=scratch)
    assert proc.returncode == 1
    assert problems(proc) == ["kas-check: kas/opt/broken.yml: is not valid YAML at line 2; fix the syntax."]


def test_missing_file_fails() -> None:
    proc = kas_check("kas/no-such-board.yml")
    assert proc.returncode == 1
    assert problems(proc) == ["kas-check: kas/no-such-board.yml: does not exist; pass existing kas files."]


def lock_for(entry: Path, commit: str) -> None:
    schema = (ROOT / "kas" / "base.yml").read_text().splitlines()[0]
    entry.with_name(entry.stem + ".lock.yml").write_text(
        f"{schema}\nheader:\n  version: 23\noverrides:\n  repos:\n    poky:\n      commit: '{commit}'\n"
    )


def test_lock_file_that_agrees_passes(scratch: Path) -> None:
    lock_for(scratch / "kas" / "imx95-verdin-community.yml", "1d54d1c4736a114e1cecbe85a0306e3814d5ce70")
    assert kas_check("kas/imx95-verdin-community.yml", cwd=scratch).returncode == 0


def test_lock_file_that_disagrees_fails(scratch: Path) -> None:
    lock_for(scratch / "kas" / "imx95-verdin-community.yml", "0" * 40)
    proc = kas_check("kas/imx95-verdin-community.yml", cwd=scratch)
    assert proc.returncode == 1
    assert problems(proc) == [
        "kas-check: kas/imx95-verdin-community.yml: repo 'poky' is at "
        "1d54d1c4736a114e1cecbe85a0306e3814d5ce70 but its lock file says "
        + "0" * 40
        + "; refresh the lock with `kas lock`."
    ]


def test_lock_file_pins_unpinned_repo(scratch: Path) -> None:
    entry = scratch / "kas" / "imx95-verdin-community.yml"
    edit(entry, "    commit: 1d54d1c4736a114e1cecbe85a0306e3814d5ce70\n", "")
    assert kas_check("kas/imx95-verdin-community.yml", cwd=scratch).returncode == 1
    lock_for(entry, "1d54d1c4736a114e1cecbe85a0306e3814d5ce70")
    assert kas_check("kas/imx95-verdin-community.yml", cwd=scratch).returncode == 0
