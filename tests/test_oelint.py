# SPDX-License-Identifier: MIT
"""oelint-adv over the layer with the committed config, and a syntax parse of every metadata file."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest
from bbsyntax import metadata_files, syntax_problems

ROOT = Path(__file__).resolve().parent.parent
LAYER = ROOT / "meta-npu"
CONFIG = ROOT / ".oelint.cfg"
LINTED_SUFFIXES = (".bb", ".bbappend", ".bbclass", ".inc")


def oelint(files: list[Path]) -> subprocess.CompletedProcess[str]:
    """oelint-adv as CI runs it: from the repository root, so .oelint.cfg applies; info hidden."""
    exe = shutil.which("oelint-adv")
    if exe is None:
        pytest.fail("oelint-adv is not installed: pip install -e '.[dev]' (pyproject.toml pins it).")
    return subprocess.run(
        [exe, "--quiet", "--relpaths", "--hide", "info", *map(str, files)],
        cwd=ROOT,
        text=True,
        capture_output=True,
        check=False,
    )


def findings(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]


def linted_files() -> list[Path]:
    return [p for p in metadata_files(LAYER) if p.name.endswith(LINTED_SUFFIXES)]


def test_layer_has_recipes_to_lint() -> None:
    names = {p.name for p in linted_files()}
    assert {"npu-image.bb", "packagegroup-npu.bb", "npu-manifest.bbclass"} <= names


def test_oelint_finds_nothing_at_warning_or_above() -> None:
    proc = oelint(linted_files())
    assert findings(proc) == []
    assert proc.returncode == 0


def test_oelint_reports_a_broken_recipe(tmp_path: Path) -> None:
    bad = tmp_path / "broken-recipe_1.0.bb"
    bad.write_text('SUMMARY = "recipe without LICENSE"\nSRC_URI = "http://example.com/x.tar.gz"\n')
    proc = oelint([bad])
    assert proc.returncode != 0
    assert any("oelint.var.mandatoryvar.LICENSE" in line for line in findings(proc))


def test_config_sets_release_and_comments_every_suppression() -> None:
    parser = configparser.ConfigParser()
    parser.read(CONFIG)
    assert parser["oelint"]["release"].strip() == "walnascar"
    lines = CONFIG.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("suppress"))
    previous = ""
    for line in lines[start + 1 :]:
        if not line.startswith((" ", "\t")):
            break
        entry = line.strip()
        if not entry.startswith("#"):
            assert previous.startswith("#"), f"suppression {entry} has no comment saying why"
        previous = entry


@pytest.mark.parametrize("path", metadata_files(LAYER), ids=lambda p: str(p.relative_to(LAYER)))
def test_metadata_file_parses(path: Path) -> None:
    assert [str(p) for p in syntax_problems(path)] == []


# kind: (file, text in it, the same text broken)
SABOTAGE = {
    "unclosed shell function": ("meta-npu/recipes-tools/npu-tools/npu-tools_1.0.0.bb", "\n}\n", "\n\n"),
    "unterminated quote": ("meta-npu/conf/layer.conf", 'DEPENDS_npu = "core"', 'DEPENDS_npu = "core'),
    "python syntax error": ("meta-npu/classes/npu-manifest.bbclass", "import json\n", "import json(\n"),
    "stray text": ("meta-npu/recipes-core/images/npu-image.bb", "inherit core-image", "inherit x\n}{"),
}


@pytest.mark.parametrize("kind", sorted(SABOTAGE))
def test_sabotaged_copy_fails_to_parse(kind: str, tmp_path: Path) -> None:
    rel, good, bad = SABOTAGE[kind]
    text = (ROOT / rel).read_text()
    assert good in text, f"{rel} changed; update the sabotage for {kind}"
    copy = tmp_path / Path(rel).name
    copy.write_text(text.replace(good, bad, 1))
    assert syntax_problems(copy) != []
