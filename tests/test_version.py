# SPDX-License-Identifier: MIT
"""One version for what the project releases: the host package, the on-target tools and the
npu-tools recipe's PV are the same number (CHANGELOG.md names it); LAYERVERSION_npu is the
layer interface's own number (documented in CONTRIBUTING.md) and moves only when that changes."""

from __future__ import annotations

import re
from pathlib import Path

import npu_target
import tomllib

import npu_accept

ROOT = Path(__file__).resolve().parents[1]


def test_package_tools_and_recipe_share_one_version() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    recipes = sorted((ROOT / "meta-npu" / "recipes-tools" / "npu-tools").glob("npu-tools_*.bb"))
    assert len(recipes) == 1, recipes
    pv = recipes[0].name.removeprefix("npu-tools_").removesuffix(".bb")
    assert project == npu_accept.__version__ == npu_target.TOOL_VERSION == pv


def test_the_changelog_names_the_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(npu_accept.__version__)}\]", text, re.MULTILINE), "CHANGELOG.md"
    assert "## [Unreleased]" in text
