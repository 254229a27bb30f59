# SPDX-License-Identifier: MIT
"""ruff over every Python file and shellcheck over every shell script of the repository."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", "__pycache__", ".venv", "build", ".pytest_cache", ".ruff_cache"}
SHELL_SHEBANGS = ("sh", "bash", "dash")


def tool(name: str, package: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        pytest.fail(f"{name} is not installed: install {package} (CI installs it).")
    return exe


def repo_files() -> list[Path]:
    return sorted(
        p for p in ROOT.rglob("*") if p.is_file() and not SKIP_DIRS.intersection(p.relative_to(ROOT).parts)
    )


def shebang(path: Path) -> str:
    """The interpreter's name from a #! line ("" when there is none)."""
    try:
        with path.open("rb") as f:
            first = f.readline(200)
    except OSError:
        return ""
    if not first.startswith(b"#!"):
        return ""
    words = first[2:].decode(errors="replace").split()
    if not words:
        return ""
    name = Path(words[0]).name
    return words[1] if name == "env" and len(words) > 1 else name


def shell_scripts() -> list[Path]:
    return [p for p in repo_files() if p.suffix == ".sh" or shebang(p) in SHELL_SHEBANGS]


def python_scripts_without_suffix() -> list[Path]:
    """Executables such as npu-run: ruff only finds *.py on its own."""
    return [p for p in repo_files() if p.suffix == "" and shebang(p).startswith("python")]


def ruff(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            tool("ruff", "ruff (pyproject.toml dev)"),
            "check",
            "--no-cache",
            "--config",
            str(ROOT / "pyproject.toml"),
            *map(str, paths),
        ],
        cwd=ROOT,
        text=True,
        capture_output=True,
        check=False,
    )


def shellcheck(paths: list[Path]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("shellcheck", "the Debian package shellcheck"), "--external-sources", *map(str, paths)],
        cwd=ROOT,
        text=True,
        capture_output=True,
        check=False,
    )


def test_ci_gate_is_among_the_shell_scripts() -> None:
    assert ROOT / ".ci" / "run" in shell_scripts()


def test_ruff_is_clean_on_the_whole_repository() -> None:
    proc = ruff([ROOT, *python_scripts_without_suffix()])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_leaves_every_python_file_unchanged() -> None:
    proc = subprocess.run(
        [
            tool("ruff", "ruff (pyproject.toml dev)"),
            "format",
            "--check",
            "--no-cache",
            "--config",
            str(ROOT / "pyproject.toml"),
            str(ROOT),
            *map(str, python_scripts_without_suffix()),
        ],
        cwd=ROOT,
        text=True,
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, "run `ruff format .`:\n" + proc.stdout + proc.stderr


def test_shellcheck_is_clean_on_every_shell_script() -> None:
    proc = shellcheck(shell_scripts())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_reports_a_bad_python_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nimport sys\n\nprint(sys.argv)\n")  # unused import
    proc = ruff([bad])
    assert proc.returncode != 0
    assert "F401" in proc.stdout


def test_shellcheck_reports_a_bad_script(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\nfor f in $(ls *.txt); do echo $f; done\n")
    assert bad in [p for p in [bad] if shebang(p) in SHELL_SHEBANGS]
    proc = shellcheck([bad])
    assert proc.returncode != 0
    assert "SC2045" in proc.stdout
