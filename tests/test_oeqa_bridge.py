# SPDX-License-Identifier: MIT
"""The oeqa runtime case meta-npu/lib/oeqa/runtime/cases/npu.py, driven against real i.MX95 board
twins (real OpenSSH sshd, the real on-target tools) through a minimal real oeqa-style target.

oe-core's own `oeqa.runtime.case.OERuntimeTestCase` needs BitBake to import, so the test puts a
stand-in base class (a unittest.TestCase with oeqa's class attributes `tc`/`td`) on sys.path; the
target is `SshTarget`, which has OESSHTarget's interface and semantics (ssh/scp processes, stderr
merged into the output, `export PATH=…;` prefix). The checks and the collector are the suite's.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import unittest
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from npu_accept.checks.registry import run_all
from npu_accept.collect import Access, collect_board
from npu_accept.profile import load_profile
from npu_accept.sim.harness import Twin
from npu_accept.sim.imx95 import FAULTS, HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile

REPO = Path(__file__).resolve().parent.parent
CASE_FILE = REPO / "meta-npu" / "lib" / "oeqa" / "runtime" / "cases" / "npu.py"
STAND_IN = '''import unittest


class OERuntimeTestCase(unittest.TestCase):
    """Stand-in for oe-core's class: the attributes OETestLoader sets on it."""

    tc = None
    td = None
    logger = None
    target = None
'''


@dataclass
class SshTarget:
    """OESSHTarget's interface over the real OpenSSH client: (status, merged output) per command."""

    twin: Twin
    timeout: int = 300

    def _options(self) -> list[str]:
        return [
            "-i",
            str(self.twin.identity),
            "-o",
            f"UserKnownHostsFile={self.twin.known_hosts}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            "LogLevel=ERROR",
        ]

    def _call(self, argv: list[str], timeout: int | None) -> tuple[int, str]:
        try:
            proc = subprocess.run(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                timeout=timeout or self.timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return 255, "Process killed - no output"
        return proc.returncode, proc.stdout.decode("utf-8", errors="ignore").rstrip()

    def run(self, command: str, timeout: int | None = None) -> tuple[int, str]:
        # OESSHTarget's PATH, plus where the twin's python3 with numpy/TFLite lives (the host's
        # interpreter: the twin's root is the host's); on an image it is /usr/bin/python3
        target_cmd = f"export PATH={Path(sys.executable).parent}:/usr/sbin:/sbin:/usr/bin:/bin; {command}"
        return self._call(
            [
                "ssh",
                "-l",
                self.twin.user,
                "-p",
                str(self.twin.port),
                *self._options(),
                self.twin.host,
                target_cmd,
            ],
            timeout,
        )

    def copyTo(self, localSrc: str, remoteDst: str) -> tuple[int, str]:  # noqa: N802, N803
        return self._call(
            [
                "scp",
                "-P",
                str(self.twin.port),
                *self._options(),
                localSrc,
                f"{self.twin.user}@{self.twin.host}:{remoteDst}",
            ],
            None,
        )

    def copyFrom(self, remoteSrc: str, localDst: str) -> tuple[int, str]:  # noqa: N802, N803
        return self._call(
            [
                "scp",
                "-P",
                str(self.twin.port),
                *self._options(),
                f"{self.twin.user}@{self.twin.host}:{remoteSrc}",
                localDst,
            ],
            None,
        )


@pytest.fixture(scope="module")
def oeqa_case(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """Import the layer's case module the way testimage does, with the stand-in base class."""
    stand_in = tmp_path_factory.mktemp("oeqa-stand-in")
    (stand_in / "oeqa" / "runtime").mkdir(parents=True)
    (stand_in / "oeqa" / "__init__.py").write_text("")
    (stand_in / "oeqa" / "runtime" / "__init__.py").write_text("")
    (stand_in / "oeqa" / "runtime" / "case.py").write_text(STAND_IN)
    sys.path.insert(0, str(stand_in))
    try:
        spec = importlib.util.spec_from_file_location("npu", CASE_FILE)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(stand_in))
        for name in [n for n in sys.modules if n == "oeqa" or n.startswith("oeqa.")]:
            del sys.modules[name]
    return module


@pytest.fixture(scope="module")
def neutron(twin_factory, tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    work = tmp_path_factory.mktemp("oeqa-neutron")
    assets = imx95_assets(work / "assets")
    profile = imx95_twin_profile(work / "profile")
    a0_board = FAULTS["a0"][0]
    return SimpleNamespace(
        work=work,
        profile=profile,
        healthy=twin_factory(imx95_spec(HEALTHY, assets)),
        a0=twin_factory(imx95_spec(a0_board, assets)),
    )


def run_case(module: ModuleType, target: object, td: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Run NpuAcceptanceTest as testimage would; {test name: (outcome, message)}."""
    case = module.NpuAcceptanceTest
    case.tc = SimpleNamespace(target=target, td=td)
    case.td = td
    case.verdict = None
    case.error = None
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(case)
    outcomes = {test.id().rsplit(".", 1)[-1]: ("pass", "") for test in suite}
    result = unittest.TestResult()
    suite.run(result)
    for test, text in result.failures + result.errors:
        outcomes[test.id().rsplit(".", 1)[-1]] = ("fail", text.strip().splitlines()[-1])
    for test, reason in result.skipped:
        outcomes[test.id().rsplit(".", 1)[-1]] = ("skip", reason)
    return outcomes


CASE_TESTS = [
    "test_npu_1_driver",
    "test_npu_2_silicon",
    "test_npu_3_runtime",
    "test_npu_4_delegate",
    "test_npu_5_outputs",
    "test_npu_6_memory",
    "test_npu_7_performance",
    "test_npu_8_kernel_log",
    "test_npu_9_determinism",
    "test_npu_10_pairing",
]


def test_healthy_twin_passes_every_check_through_oeqa(
    oeqa_case: ModuleType, neutron: SimpleNamespace
) -> None:
    td = {
        "NPU_ACCEPT_PROFILE": str(neutron.profile),
        "TEST_LOG_DIR": str(neutron.work / "healthy-log"),
        "MACHINE": "imx95-19x19-verdin",
    }
    outcomes = run_case(oeqa_case, SshTarget(neutron.healthy), td)
    assert sorted(outcomes) == sorted(CASE_TESTS)
    assert all(outcome == "pass" for outcome, _ in outcomes.values()), outcomes
    assert (neutron.work / "healthy-log" / "npu-accept" / "imx95-19x19-verdin" / "npu-info.json").is_file()


def test_a0_twin_fails_silicon_with_the_suites_own_sentence(
    oeqa_case: ModuleType, neutron: SimpleNamespace
) -> None:
    td = {"NPU_ACCEPT_PROFILE": str(neutron.profile), "TEST_LOG_DIR": str(neutron.work / "a0-log")}
    outcomes = run_case(oeqa_case, SshTarget(neutron.a0), td)
    assert outcomes["test_npu_2_silicon"][0] == "fail"
    assert "A0 (revision 1.0)" in outcomes["test_npu_2_silicon"][1]
    # the same board judged by the suite's own paramiko collector: same verdicts, same sentence
    profile = load_profile(str(neutron.profile), neutron.profile.parent)
    facts = collect_board(
        neutron.a0.target,
        profile,
        Access(neutron.a0.identity, neutron.a0.known_hosts, False),
        neutron.work / "a0-suite",
    )
    suite = run_all(facts, profile)
    assert suite["silicon"].message in outcomes["test_npu_2_silicon"][1]
    for index, check in enumerate(suite, start=1):
        name = f"test_npu_{index}_{check}"
        if check != "performance":  # latency depends on the run; its verdict on this twin does not
            assert outcomes[name][0] == suite[check].status, (name, outcomes[name], suite[check])


def test_missing_profile_variable_fails_each_test_with_one_sentence(
    oeqa_case: ModuleType, neutron: SimpleNamespace
) -> None:
    outcomes = run_case(oeqa_case, SshTarget(neutron.healthy), {})
    assert {outcome for outcome, _ in outcomes.values()} == {"fail"}
    assert all("NPU_ACCEPT_PROFILE is not set" in message for _, message in outcomes.values())


def test_unreachable_target_fails_with_a_sentence(oeqa_case: ModuleType, neutron: SimpleNamespace) -> None:
    gone = SimpleNamespace(**{**neutron.healthy.__dict__})
    gone.port = 1  # nothing listens there
    td = {"NPU_ACCEPT_PROFILE": str(neutron.profile), "TEST_LOG_DIR": str(neutron.work / "gone-log")}
    outcomes = run_case(oeqa_case, SshTarget(gone), td)  # type: ignore[arg-type]
    assert {outcome for outcome, _ in outcomes.values()} == {"fail"}
    assert "mktemp -d failed on the oeqa target" in outcomes["test_npu_1_driver"][1]


def test_case_without_the_suite_on_the_host_fails_each_test_with_one_sentence(tmp_path: Path) -> None:
    """The build host's python3 lacks a dependency of npu_accept (paramiko shadowed here): loading
    the case still works and every test fails with the pip command, never a traceback at import."""
    (tmp_path / "oeqa" / "runtime").mkdir(parents=True)
    (tmp_path / "oeqa" / "__init__.py").write_text("")
    (tmp_path / "oeqa" / "runtime" / "__init__.py").write_text("")
    (tmp_path / "oeqa" / "runtime" / "case.py").write_text(STAND_IN)
    (tmp_path / "paramiko").mkdir()
    (tmp_path / "paramiko" / "__init__.py").write_text("raise ImportError(\"No module named 'paramiko'\")\n")
    script = f"""
import importlib.util, sys, unittest
sys.path.insert(0, {str(tmp_path)!r})
spec = importlib.util.spec_from_file_location("npu", {str(CASE_FILE)!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
case = module.NpuAcceptanceTest
case.td = {{"NPU_ACCEPT_PROFILE": "imx95-verdin"}}
result = unittest.TestResult()
unittest.defaultTestLoader.loadTestsFromTestCase(case).run(result)
print(len(result.failures), result.failures[0][1].strip().splitlines()[-1])
"""
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    count, message = proc.stdout.strip().split(" ", 1)
    assert count == "10"
    assert "The npu_accept package cannot be imported by the host's python3" in message
    assert "pip install -e" in message


def test_the_oeqa_adapter_is_bounded_like_the_ssh_link(neutron: SimpleNamespace) -> None:
    """Issue 23: the suite's output bounds and flood limits hold over oeqa's target too."""
    from npu_accept.collect import BoardLink
    from npu_accept.lab.oeqa_bridge import OeqaConnection
    from npu_accept.transport import OutputFlood

    link = OeqaConnection(SshTarget(neutron.healthy), target="oeqa-flood")
    try:
        assert isinstance(link, BoardLink)  # a whole board link: bounded run and run_in_temp_dir
        within = link.run("head -c 5000 /dev/zero; echo oops >&2; exit 3", timeout=60, max_output=1000)
        assert (within.exit_code, len(within.stdout), within.stdout_dropped) == (3, 1000, 4000)
        assert within.stderr == b"oops\n" and within.stderr_dropped == 0
        with pytest.raises(OutputFlood) as flood:
            link.run("yes", timeout=60, max_output=1000, flood_limit=100_000)
        assert len(flood.value.stdout) == 1000 and "printed more than" in str(flood.value)
        with pytest.raises(OutputFlood):
            link.run("head -c 300000 /dev/zero >&2", timeout=60, max_output=1000, flood_limit=100_000)
        path, result = link.run_in_temp_dir('echo "$NPU_ACCEPT_TMP"', timeout=60)
        assert result.text().strip() == path and path.startswith("/")
    finally:
        link.close()
    status, output = SshTarget(neutron.healthy).run(f"ls -d {path} 2>&1; true")
    assert "No such file" in output  # the temp dir went at close()
