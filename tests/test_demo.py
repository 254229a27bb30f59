# SPDX-License-Identifier: MIT
"""`npu-accept demo` and the `npu-accept` command from the checkout: the two simulated i.MX95
boards get their verdicts, a host that cannot run them is told what to install in one sentence,
and bad commands are one sentence too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from npu_accept import cli
from npu_accept.sim import demo

REPO = Path(__file__).resolve().parents[1]


def _npu_accept(*args: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(REPO / "src")
    return subprocess.run(
        [sys.executable, "-m", "npu_accept.cli", *map(str, args)],
        cwd="/",
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.twin
def test_demo_accepts_the_b0_and_refuses_the_a0_field_report(tmp_path: Path) -> None:
    run = _npu_accept("demo", "--artifacts", tmp_path / "out")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SIMULATED" in run.stdout and "no hardware" in run.stdout
    b0, a0 = (line for line in run.stdout.splitlines() if "(simulated)" in line)
    assert b0.split()[-1] == "ACCEPTED" and "NOT" not in b0
    assert "NOT ACCEPTED (silicon, outputs failed)" in a0
    assert "root cause: NPU outputs are degenerate and the SoC is i.MX95 A0 (revision 1.0)" in run.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert sorted(board["accepted"] for board in summary.values()) == [False, True]
    assert (tmp_path / "out" / "report.html").is_file()
    assert run.stderr == ""


def test_demo_without_root_sshd_compiler_or_bindings_is_one_sentence(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(demo.shutil, "which", lambda name: None if name == "gcc" else f"/usr/bin/{name}")
    real_find_spec = demo.importlib.util.find_spec
    monkeypatch.setattr(
        demo.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "ai_edge_litert" else real_find_spec(name, *a),
    )
    assert cli.main(["demo"]) == demo.EXIT_CANNOT_RUN
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("npu-accept demo cannot start its simulated boards: it needs root")
    for fix in ("run it as root", "apt-get install gcc libc6-dev", "pip install 'meta-npu-tools[demo]'"):
        assert fix in err


def test_demo_with_everything_present_has_nothing_missing() -> None:
    if os.geteuid() != 0:
        pytest.skip("the requirement list includes root")
    assert demo.missing_requirements() == []


def test_demo_reports_unexpected_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """If the suite accepted the A0 board the demo must say so and exit 1, not print a success."""
    boards = [demo.DemoBoard("B0", "root@h:1", True), demo.DemoBoard("A0", "root@h:2", False)]
    (tmp_path / "summary.json").write_text(
        json.dumps({b.target: {"accepted": True, "root_cause": None, "checks": {}} for b in boards})
    )
    proc = subprocess.CompletedProcess([], 0, "suite output", "")
    assert demo._report(boards, proc, tmp_path) == demo.EXIT_UNEXPECTED
    assert "the verdicts are not the expected ones" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "word"), [((), "no command given"), (("frobnicate",), "unknown command 'frobnicate'")]
)
def test_bad_command_is_one_sentence(args: tuple[str, ...], word: str) -> None:
    run = _npu_accept(*args)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and word in run.stderr and "npu-accept --help" in run.stderr


def test_run_without_a_target_says_so_with_exit_4() -> None:
    run = _npu_accept("run", "--board", "imx95-verdin")
    assert run.returncode == 4
    assert "The acceptance suite needs a board: add --target USER@HOST[:PORT]" in run.stderr
    assert "Traceback" not in run.stderr


def test_profiles_lists_the_shipped_ones() -> None:
    run = _npu_accept("profiles")
    assert run.returncode == 0
    names = [line.split()[0] for line in run.stdout.splitlines()]
    assert names == ["generic-cpu", "imx95-verdin", "milkv-duo256m", "rk3576-evb", "rk3588-evb", "rock-5b"]


@pytest.mark.twin
def test_scripts_demo_is_one_command_from_the_checkout(tmp_path: Path) -> None:
    """README's first command: Debian packages, a venv, the package, the demo — run as a user would."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "VIRTUAL_ENV", "PYTHON"))}
    env["NPU_DEMO_VENV"] = str(tmp_path / "venv")
    env["PATH"] = "/usr/sbin:/usr/bin:/sbin:/bin"
    run = subprocess.run(
        ["bash", str(REPO / "scripts" / "demo"), "--artifacts", str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "NOT ACCEPTED (silicon, outputs failed)" in run.stdout
    assert (tmp_path / "out" / "report.html").is_file()


def test_scripts_demo_refuses_a_non_root_user_in_one_sentence() -> None:
    run = subprocess.run(
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "bash",
            str(REPO / "scripts" / "demo"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "run it as root" in run.stderr
