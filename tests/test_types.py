# SPDX-License-Identifier: MIT
"""mypy --strict with the project's configuration (pyproject.toml [tool.mypy]) over the files that
are clean: the host package's files listed in CLEAN and the whole on-target package (npu_target,
which must also stay Python 3.9 and standard-library only; mypy checks it as 3.10, the oldest it
knows).

Files not listed yet still have errors (issue 23 item 6 goes on); they are type-checked as
imports, with their own errors silenced (--follow-imports=silent), so a listed file is judged
against their real types. A file made clean joins the list; when all are, the list becomes the
configuration's own `files`.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
TARGET = ROOT / "meta-npu" / "recipes-tools" / "npu-tools" / "files"

CLEAN = [
    "npu_accept/compare.py",
    "npu_accept/diagnose/__init__.py",
    "npu_accept/diagnose/catalogue.py",
    "npu_accept/diagnose/cli.py",
    "npu_accept/diagnose/corpus.py",
    "npu_accept/diagnose/explain.py",
    "npu_accept/diagnose/findings.py",
    "npu_accept/diagnose/kernel_faults.py",
    "npu_accept/diagnose/lines.py",
    "npu_accept/diagnose/pairings.py",
    "npu_accept/diagnose/sources.py",
    "npu_accept/logparse.py",
    "npu_accept/schemaload.py",
    "npu_accept/tensorstream.py",
    "npu_accept/validation.py",
    "npu_accept/lab/oeqa_bridge.py",
    "npu_accept/checks/__init__.py",
    "npu_accept/checks/base.py",
    "npu_accept/checks/delegate.py",
    "npu_accept/checks/determinism.py",
    "npu_accept/checks/driver.py",
    "npu_accept/checks/kernel_log.py",
    "npu_accept/checks/memory.py",
    "npu_accept/checks/outputs.py",
    "npu_accept/checks/pairing.py",
    "npu_accept/checks/performance.py",
    "npu_accept/checks/registry.py",
    "npu_accept/checks/roster.py",
    "npu_accept/checks/runtime.py",
    "npu_accept/checks/silicon.py",
    "npu_accept/checks/summary.py",
    "npu_accept/flash/__init__.py",
    "npu_accept/flash/bmaptool.py",
    "npu_accept/flash/board_info.py",
    "npu_accept/flash/checksum.py",
    "npu_accept/flash/cli.py",
    "npu_accept/flash/device.py",
    "npu_accept/flash/errors.py",
    "npu_accept/flash/image.py",
    "npu_accept/flash/methods.py",
    "npu_accept/flash/plan.py",
    "npu_accept/flash/progress.py",
    "npu_accept/flash/request.py",
    "npu_accept/flash/revision.py",
    "npu_accept/flash/rkdeveloptool.py",
    "npu_accept/flash/spec.py",
    "npu_accept/flash/uuu.py",
    "npu_accept/sim/__init__.py",
    "npu_accept/sim/delegate/__init__.py",
    "npu_accept/sim/delegate/build.py",
    "npu_accept/sim/delegate/convert.py",
    "npu_accept/sim/demo.py",
    "npu_accept/sim/harness.py",
    "npu_accept/sim/imx95.py",
    "npu_accept/sim/models.py",
]
# Every family package, whole: a new family's modules are strict from the start (no edit here).
CLEAN += sorted(str(p.relative_to(SRC)) for p in (SRC / "npu_accept" / "families").rglob("*.py"))
# The whole on-target package: a new family's probe module is strict from the start.
CLEAN_TARGET = sorted(str(p.relative_to(TARGET)) for p in (TARGET / "npu_target").rglob("*.py"))


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


def test_the_listed_files_exist() -> None:
    missing = [p for p in [*(SRC / f for f in CLEAN), *(TARGET / f for f in CLEAN_TARGET)] if not p.is_file()]
    assert not missing, f"moved or removed, update CLEAN: {missing}"


def test_mypy_strict_is_clean_on_the_clean_files() -> None:
    proc = mypy(*(str(SRC / f) for f in CLEAN), *(str(TARGET / f) for f in CLEAN_TARGET))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_strict_reports_a_badly_typed_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import json\n\n\ndef count(text: str) -> int:\n    return json.loads(text)\n")
    proc = mypy(str(bad))
    assert proc.returncode == 1
    assert "[no-any-return]" in proc.stdout, proc.stdout + proc.stderr
