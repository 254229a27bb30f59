# SPDX-License-Identifier: MIT
"""mypy --strict with the project's configuration (pyproject.toml [tool.mypy]) over its `files`:
the whole host package (src/npu_accept) and the whole on-target package (npu_target, which must
also stay Python 3.9 and standard-library only; mypy checks it as 3.10, the oldest it knows). A
new module, a new family's included, is strict from its first commit: no list to join.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip(
            "mypy is not installed in this interpreter; install the dev extra (pip install -e '.[dev]')."
        )
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--follow-imports=silent",
            "--cache-dir",
            "/dev/null",  # nothing written into the checkout
            *args,
        ],
        cwd=ROOT,
        text=True,
        capture_output=True,
        check=False,
        timeout=300,
    )


def test_the_configuration_checks_both_packages_whole() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True
    assert config["files"] == ["src/npu_accept", "meta-npu/recipes-tools/npu-tools/files/npu_target"]


def test_mypy_strict_is_clean_on_both_packages() -> None:
    proc = mypy()  # the configuration's own files
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "no issues found in" in proc.stdout, proc.stdout


def test_mypy_strict_reports_a_badly_typed_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import json\n\n\ndef count(text: str) -> int:\n    return json.loads(text)\n")
    proc = mypy(str(bad))
    assert proc.returncode == 1
    assert "[no-any-return]" in proc.stdout, proc.stdout + proc.stderr
