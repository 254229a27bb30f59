# SPDX-License-Identifier: MIT
"""`npu-accept demo`: the real suite, over real SSH, against two simulated i.MX95 boards.

One twin is a healthy i.MX95 B0 Verdin EVK that must be accepted; the other is the board of the
i.MX95 A0 field report (A0 silicon whose NPU returns one constant for every output), which must
be refused with its root cause.  Both run the real on-target tools and real TFLite inference on
this host's CPU; the twin delegate stands in for NXP's Neutron delegate.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

EXIT_OK, EXIT_UNEXPECTED, EXIT_CANNOT_RUN = 0, 1, 2
SUITE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Requirement:
    what: str  # what is missing, as a phrase
    fix: str  # what to install or run


@dataclass(frozen=True)
class DemoBoard:
    label: str
    target: str
    expect_accepted: bool


def missing_requirements() -> list[Requirement]:
    """What the simulated boards need and this host lacks (empty: the demo can run)."""
    missing = []
    if os.geteuid() != 0:
        missing.append(Requirement("root (the boards run in Linux namespaces)", "run it as root"))
    if shutil.which("unshare") is None:
        missing.append(Requirement("unshare", "apt-get install util-linux"))
    if not Path("/usr/sbin/sshd").exists() or shutil.which("ssh-keygen") is None:
        missing.append(Requirement("OpenSSH", "apt-get install openssh-server openssh-client"))
    if shutil.which("gcc") is None:
        missing.append(Requirement("a C compiler", "apt-get install gcc libc6-dev"))
    if importlib.util.find_spec("ai_edge_litert") is None:
        missing.append(Requirement("the TFLite bindings", "pip install 'meta-npu-tools[demo]'"))
    return missing


def requirements_sentence(missing: Sequence[Requirement]) -> str:
    """One sentence: what the demo needs and how to get it."""
    needs = ", ".join(m.what for m in missing)
    fixes = "; ".join(m.fix for m in missing)
    return f"npu-accept demo cannot start its simulated boards: it needs {needs} ({fixes})."


def run_demo(artifacts: Path | None) -> int:
    """Start the two twins, run the suite against both, print the verdicts; the exit status."""
    missing = missing_requirements()
    if missing:
        sys.stderr.write(requirements_sentence(missing) + "\n")
        return EXIT_CANNOT_RUN
    from npu_accept.sim.harness import TwinError

    artifacts = artifacts or Path(tempfile.mkdtemp(prefix="npu-accept-demo-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="npu-accept-demo-work-"))
    print(
        "npu-accept demo: two SIMULATED i.MX95 boards, no hardware. Each is a board twin: a real "
        "OpenSSH server in Linux namespaces presenting an i.MX95's files; the real on-target tools "
        "and real TFLite inference run on this host's CPU, a stand-in delegate plays the NPU.",
        flush=True,
    )
    try:
        return _run(artifacts, work)
    except (TwinError, OSError, RuntimeError, ValueError) as exc:
        sys.stderr.write(f"npu-accept demo: the simulated boards could not run ({exc}).\n")
        return EXIT_UNEXPECTED
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(artifacts: Path, work: Path) -> int:
    from npu_accept.sim.harness import fleet_access, started_twins
    from npu_accept.sim.imx95 import A0_FIELD_REPORT, HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile

    with _quiet_native_stderr():  # TFLite's own "INFO: Created … delegate" lines, not ours
        assets = imx95_assets(work / "assets")
        profile = imx95_twin_profile(work / "profile", runs=10)
    specs = (imx95_spec(board, assets) for board in (HEALTHY, A0_FIELD_REPORT))
    with started_twins(specs, work / "twins") as twins:
        identity, known_hosts = fleet_access(twins, work / "client")
        boards = [
            DemoBoard("i.MX95 B0, healthy", twins[0].target, True),
            DemoBoard("i.MX95 A0, the field report", twins[1].target, False),
        ]
        proc = _run_suite(boards, profile, identity, known_hosts, artifacts)
    return _report(boards, proc, artifacts)


@contextlib.contextmanager
def _quiet_native_stderr() -> Iterator[None]:
    """Hold back what native code writes to fd 2; show it only if the block fails."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            held.seek(0)
            sys.stderr.write(held.read().decode(errors="replace"))
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _run_suite(
    boards: Sequence[DemoBoard], profile: Path, identity: Path, known_hosts: Path, artifacts: Path
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "npu_accept.cli", "run", "-q"]
    for board in boards:
        argv += ["--target", board.target]
    argv += ["--board", str(profile), "--identity", str(identity), "--known-hosts", str(known_hosts)]
    argv += ["--artifacts", str(artifacts), "--junitxml", str(artifacts / "junit.xml")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the suite's conftest loads its own plugin
    return subprocess.run(argv, capture_output=True, text=True, timeout=SUITE_TIMEOUT_S, env=env, check=False)


def _report(boards: Sequence[DemoBoard], proc: subprocess.CompletedProcess[str], artifacts: Path) -> int:
    summary_path = artifacts / "summary.json"
    if not summary_path.is_file():
        sys.stderr.write(
            f"npu-accept demo: the suite wrote no summary (exit {proc.returncode}); its output:\n"
            f"{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
        )
        return EXIT_UNEXPECTED
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    as_expected = True
    print()
    for board in boards:
        verdict = summary.get(board.target, {})
        accepted = bool(verdict.get("accepted"))
        checks = verdict.get("checks", {})
        failed = [name for name, check in checks.items() if check.get("status") == "fail"]
        state = "ACCEPTED" if accepted else f"NOT ACCEPTED ({', '.join(failed) or 'no result'} failed)"
        print(f"  {board.label + ' (simulated)':40s} {board.target:22s} {state}")
        if verdict.get("root_cause"):
            print(f"      root cause: {verdict['root_cause']}")
        as_expected &= accepted == board.expect_accepted
    print()
    print(f"report: {artifacts / 'report.html'}  (also report.md, summary.json, junit.xml there)")
    if not as_expected:
        sys.stderr.write(
            "npu-accept demo: the verdicts are not the expected ones (B0 accepted, A0 refused); "
            f"the suite's output:\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}"
        )
        return EXIT_UNEXPECTED
    return EXIT_OK
