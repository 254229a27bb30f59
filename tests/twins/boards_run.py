# SPDX-License-Identifier: MIT
"""Run the real acceptance suite (`python3 -m pytest pytests …`) against board twins and read back
what a user and a CI would see: exit status, terminal output, JUnit XML per test case, artifacts.

Shared by tests/test_suite_neutron.py, tests/test_cli_options.py, tests/test_reports.py and the
benchmarks.  Nothing here judges a board: the suite does, in its own process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npu_accept.sim.harness import Twin, fleet_access

__all__ = ["fleet_access"]  # the tests and benchmarks import it from here too

REPO = Path(__file__).resolve().parents[2]
SUITE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Case:
    """One JUnit test case: the check, the board, pass/fail/skip and the sentence."""

    check: str
    target: str
    status: str
    message: str
    seconds: float = 0.0  # the test case's JUnit time


@dataclass
class SuiteRun:
    returncode: int
    stdout: str
    stderr: str
    artifacts: Path
    seconds: float
    cases: list[Case] = field(default_factory=list)
    max_rss_kib: int = 0  # peak resident memory of the suite process
    cpu_seconds: float = 0.0  # user + system CPU of the suite process

    def results(self, target: str | None = None) -> dict[str, Case]:
        return {c.check: c for c in self.cases if target is None or c.target == target}

    def summary(self) -> dict[str, dict]:
        """summary.json of the run: per target, accepted, root cause and every check's sentence."""
        return json.loads((self.artifacts / "summary.json").read_text())

    def message(self, check: str, target: str | None = None) -> str:
        """The sentence of a check, passed or not (JUnit carries only failure and skip messages)."""
        boards = self.summary()
        board = boards[target] if target else next(iter(boards.values()))
        return board["checks"][check]["message"]

    def failed(self, target: str | None = None) -> set[str]:
        return {c.check for c in self.results(target).values() if c.status == "fail"}

    def describe(self) -> str:
        return (
            f"exit {self.returncode}\n"
            + "\n".join(f"{c.target} {c.check}: {c.status} {c.message}" for c in self.cases)
            + f"\n--- stdout tail ---\n{self.stdout[-3000:]}\n--- stderr tail ---\n{self.stderr[-2000:]}"
        )


_CASE_NAME = re.compile(r"test_(\w+)\[(.+)\]$")


def read_junit(path: Path) -> list[Case]:
    cases = []
    for node in ET.parse(path).iter("testcase"):
        match = _CASE_NAME.match(node.get("name", ""))
        if not match:
            continue
        status, message = "pass", ""
        for child in node:
            if child.tag in ("failure", "error"):
                status, message = "fail", child.get("message", "").removeprefix("Failed: ")
            elif child.tag == "skipped":
                status, message = "skip", child.get("message", "")
        cases.append(Case(match.group(1), match.group(2), status, message, float(node.get("time", 0))))
    return cases


def run_suite(
    targets: Sequence[str],
    profile: str | Path,
    workdir: Path,
    identity: Path | None,
    known_hosts: Path | None,
    extra: Sequence[str] = (),
    timeout: float = SUITE_TIMEOUT_S,
) -> SuiteRun:
    """The suite as a user runs it, in a subprocess, with JUnit XML and artifacts under workdir."""
    workdir.mkdir(parents=True, exist_ok=True)
    junit = workdir / "junit.xml"
    artifacts = workdir / "artifacts"
    argv = [sys.executable, "-m", "pytest", "pytests", "-p", "no:cacheprovider", "-q"]
    for target in targets:
        argv += ["--target", target]
    argv += ["--board", str(profile), "--junitxml", str(junit), "--artifacts", str(artifacts)]
    if identity is not None:
        argv += ["--identity", str(identity)]
    if known_hosts is not None:
        argv += ["--known-hosts", str(known_hosts)]
    argv += list(extra)
    # The suite needs only its own plugin; not loading every installed pytest plugin halves start-up.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    started = time.monotonic()
    code, stdout, stderr, usage = _run_measured(argv, timeout, env)
    run = SuiteRun(
        code,
        stdout,
        stderr,
        artifacts,
        time.monotonic() - started,
        max_rss_kib=usage.ru_maxrss,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
    )
    if junit.exists():
        run.cases = read_junit(junit)
    return run


def _run_measured(argv: list[str], timeout: float, env: dict[str, str]) -> tuple[int, str, str, Any]:
    """Exit status, stdout, stderr and resource usage (peak RSS, CPU) of the suite process (os.wait4)."""
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    streams: dict[str, bytes] = {}

    def read(name: str, stream: Any) -> None:
        with stream:
            streams[name] = stream.read()

    readers = [
        threading.Thread(target=read, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))
    ]
    for reader in readers:
        reader.start()
    killer = threading.Timer(timeout, proc.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        killer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:
        reader.join()
    text = {k: v.decode("utf-8", "replace") for k, v in streams.items()}
    return proc.returncode, text["out"], text["err"], usage


def run_on_twin(twin: Twin, profile: str | Path, workdir: Path, extra: Sequence[str] = ()) -> SuiteRun:
    return run_suite([twin.target], profile, workdir, twin.identity, twin.known_hosts, extra)
