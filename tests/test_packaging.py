# SPDX-License-Identifier: MIT
"""The package as a user installs it: a wheel built from this checkout, installed into a fresh
venv outside it, used from /tmp — npu-compare, npu-accept run / profiles / demo and the pytest11
plugin — plus the wheel's contents against the sources it must carry."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from conftest import TwinFactory

from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile

REPO = Path(__file__).resolve().parents[1]
TOOLS = REPO / "meta-npu" / "recipes-tools" / "npu-tools" / "files"
PIP_TIMEOUT_S = 900


@dataclass(frozen=True)
class Venv:
    root: Path
    workdir: Path  # a directory outside the checkout to run the commands from

    def bin(self, name: str) -> Path:
        return self.root / "bin" / name

    def run(self, *argv: str | Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHON", "VIRTUAL_ENV"))}
        env["PATH"] = f"{self.root / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}"
        return subprocess.run(
            [str(a) for a in argv],
            cwd=self.workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def pip(self, *args: str | Path) -> None:
        proc = self.run(
            self.bin("python"), "-m", "pip", "install", "-q", "--disable-pip-version-check", *args
        )
        assert proc.returncode == 0, proc.stderr[-2000:]


def _source_copy(destination: Path) -> Path:
    """The checkout's files as git sees them (tracked and new, not ignored) in a scratch copy, so
    the build writes nothing into the checkout."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = REPO / os.fsdecode(name)
        if source.is_file():
            target = destination / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = _source_copy(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (built,) = out.glob("meta_npu_tools-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path) -> Iterator[Venv]:
    """A fresh venv (no system site-packages) with the wheel installed, outside the checkout."""
    root = Path(tempfile.mkdtemp(prefix="npu-venv-"))
    workdir = Path(tempfile.mkdtemp(prefix="npu-user-"))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
        env = Venv(root, workdir)
        env.pip(wheel)
        yield env
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(workdir, ignore_errors=True)


def _wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_carries_every_source_and_data_file(wheel: Path) -> None:
    names = _wheel_names(wheel)
    expected = {
        f"npu_accept/{p.relative_to(REPO / 'src' / 'npu_accept').as_posix()}"
        for p in _files(REPO / "src" / "npu_accept")
    }
    expected |= {
        f"npu_target/{p.relative_to(TOOLS / 'npu_target').as_posix()}" for p in _files(TOOLS / "npu_target")
    }
    expected |= {f"npu_accept/suite/{p.name}" for p in (REPO / "pytests").glob("*.py")}
    expected |= {"npu_accept/target_tools/npu-run", "npu_accept/target_tools/npu-info"}
    missing = sorted(expected - names)
    assert not missing, (
        f"the wheel lacks {missing[:8]}: add the new package to [tool.setuptools] packages and its "
        "data to package-data in pyproject.toml"
    )
    assert "npu_accept/sim/assets/face_detection_short_range.LICENSE" in names


def test_wheel_carries_the_goldens_the_checkout_links_to(wheel: Path) -> None:
    # In the checkout the RKNN profiles' goldens are links to the layer's one copy; the wheel
    # holds their bytes.
    links = [p for p in (REPO / "src" / "npu_accept" / "profiles" / "rknn").rglob("*.npy") if p.is_symlink()]
    assert len(links) == 10
    with zipfile.ZipFile(wheel) as archive:
        for link in links:
            name = f"npu_accept/{link.relative_to(REPO / 'src' / 'npu_accept').as_posix()}"
            assert archive.read(name) == link.read_bytes(), name


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"]


def test_wheel_registers_the_commands_and_the_pytest_plugin(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        entry_points = next(
            archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")
        )
    assert "[pytest11]\nnpu_accept.plugin = npu_accept.plugin" in entry_points
    for command in ("npu-accept = npu_accept.cli:main", "npu-compare = ", "npu-flash = "):
        assert command in entry_points


def test_installed_npu_compare_finds_the_shipped_profile(venv: Venv) -> None:
    ref = venv.workdir / "ref.npy"
    out = venv.workdir / "out.npy"
    np.save(ref, np.linspace(0.0, 1.0, 1000, dtype=np.float32))
    np.save(out, np.linspace(0.0, 1.0, 1000, dtype=np.float32) + 0.1)
    run = venv.run(
        venv.bin("npu-compare"), ref, out, "--profile", "imx95-verdin", "--model", "mobilenet_v1_quant"
    )
    assert run.returncode == 1 and "MISMATCH" in run.stdout, run.stdout + run.stderr
    assert "max_abs      0.1   (threshold 0.05)" in run.stdout  # the profile's threshold applied
    same = venv.run(
        venv.bin("npu-compare"), ref, ref, "--profile", "imx95-verdin", "--model", "mobilenet_v1_quant"
    )
    assert same.returncode == 0 and "MATCH" in same.stdout


def test_installed_profiles_and_a_users_own(venv: Venv) -> None:
    listed = venv.run(venv.bin("npu-accept"), "profiles")
    assert listed.returncode == 0
    for name in ("imx95-verdin", "rk3588-evb", "rk3576-evb", "rock-5b", "milkv-duo256m", "generic-cpu"):
        assert name in listed.stdout
    own = venv.workdir / "own"
    own.mkdir()
    shipped = venv.run(
        venv.bin("python"), "-c", "import npu_accept.paths as p; print(p.packaged_profiles_dir())"
    )
    text = (
        (Path(shipped.stdout.strip()) / "generic-cpu.yaml")
        .read_text()
        .replace("name: generic-cpu", "name: my-board")
    )
    (own / "my-board.yaml").write_text(text)
    assert "my-board" in venv.run(venv.bin("npu-accept"), "profiles", "--profiles-dir", own).stdout
    env_run = subprocess.run(
        [str(venv.bin("npu-accept")), "profiles"],
        cwd=venv.workdir,
        env={**os.environ, "NPU_ACCEPT_PROFILES": str(own)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert "my-board" in env_run.stdout


def test_installed_plugin_stays_out_of_other_test_sessions(venv: Venv) -> None:
    """pytest11 loads the plugin into every pytest of the venv: a foreign test run is unaffected."""
    foreign = venv.workdir / "foreign"
    foreign.mkdir()
    (foreign / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef board():\n    return 'mine'\n"
    )
    (foreign / "test_other.py").write_text("def test_board(board):\n    assert board == 'mine'\n")
    run = venv.run(venv.bin("python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", foreign)
    assert run.returncode == 0, run.stdout + run.stderr
    helped = venv.run(venv.bin("python"), "-m", "pytest", "--help")
    assert "--target=USER@HOST[:PORT]" in helped.stdout and "--profiles-dir=DIR" in helped.stdout


def test_installed_demo_names_the_missing_bindings(venv: Venv) -> None:
    """The wheel without its [demo] extra: one sentence naming what to install, exit 2."""
    if venv.run(venv.bin("python"), "-c", "import ai_edge_litert").returncode == 0:
        pytest.skip("the venv already has the TFLite bindings (test order)")
    run = venv.run(venv.bin("npu-accept"), "demo")
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'meta-npu-tools[demo]'" in lines[0], run.stderr


@pytest.mark.twin
def test_installed_demo_runs_from_tmp(venv: Venv) -> None:
    """`npu-accept demo` from the venv (itself under /tmp, which a twin replaces with a tmpfs)."""
    venv.pip("ai-edge-litert>=2.3")
    artifacts = venv.workdir / "demo"
    run = venv.run(venv.bin("npu-accept"), "demo", "--artifacts", artifacts)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SIMULATED" in run.stdout
    b0, a0 = (line for line in run.stdout.splitlines() if "(simulated)" in line)
    assert "B0" in b0 and b0.rstrip().endswith("ACCEPTED") and "NOT ACCEPTED" not in b0
    assert "A0" in a0 and "NOT ACCEPTED" in a0
    assert "root cause: NPU outputs are degenerate and the SoC is i.MX95 A0 (revision 1.0)" in run.stdout
    assert f"report: {artifacts / 'report.html'}" in run.stdout
    assert (artifacts / "report.html").is_file() and (artifacts / "junit.xml").is_file()


def test_installed_suite_runs_against_a_twin(
    venv: Venv, twin_factory: TwinFactory, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """`npu-accept run` and the pytest11 plugin with the user's own test module, from /tmp."""
    work = tmp_path_factory.mktemp("installed-run")
    twin = twin_factory(imx95_spec(HEALTHY, imx95_assets(work / "assets")))
    profile = imx95_twin_profile(work / "profile", runs=5)
    common = ["--target", twin.target, "--board", profile, "--identity", twin.identity]
    common += ["--known-hosts", twin.known_hosts]
    run = venv.run(venv.bin("npu-accept"), "run", "-q", *common, "--artifacts", work / "run")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert "ACCEPTED" in run.stdout and (work / "run" / "report.html").is_file()
    own = venv.workdir / "own_checks"
    own.mkdir(exist_ok=True)
    (own / "test_mine.py").write_text(
        "def test_silicon(judge):\n    assert 'revision 2.0' in judge('silicon').message\n"
    )
    mine = venv.run(venv.bin("python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", own, *common)
    assert mine.returncode == 0 and "1 passed" in mine.stdout, mine.stdout[-3000:] + mine.stderr[-2000:]
