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
import time
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import models
import numpy as np
import yaml

from twins.boards import CONVERTED_NAME, MODELS_DIR, REFERENCE_NAME, TwinAssets
from twins.delegate.build import build_delegate
from twins.delegate.convert import convert
from twins.harness import Twin

REPO = Path(__file__).resolve().parents[2]
PROFILES = REPO / "pytests" / "profiles"
SUITE_TIMEOUT_S = 600


def imx95_assets(directory: Path) -> TwinAssets:
    """The twin delegate, the real face detector and its "Neutron-converted" copy (cached in directory)."""
    directory.mkdir(parents=True, exist_ok=True)
    delegate = build_delegate(directory)
    reference = models.model_path(models.FACE_DETECTION)
    converted = directory / CONVERTED_NAME
    if not converted.exists() or converted.stat().st_mtime < reference.stat().st_mtime:
        partial = directory / (CONVERTED_NAME + ".tmp")
        convert(reference, partial)
        partial.replace(converted)
    return TwinAssets(delegate=delegate, converted=converted, reference=reference)


def imx95_twin_profile(
    directory: Path, runs: int = 20, regression_tolerance: float = 1.0, golden: bool = True
) -> Path:
    """imx95-verdin.yaml with the twin's models and the twin's performance expectations.

    Everything that judges the silicon, driver, delegate, pool and outputs is the shipped profile's.
    Only the models differ (the twin ships the MediaPipe face detector; its input is a real photo)
    and the speed expectations: a twin's "NPU" is the host CPU, so it cannot be 2x faster than it.
    """
    directory.mkdir(parents=True, exist_ok=True)
    data = yaml.safe_load((PROFILES / "imx95-verdin.yaml").read_text())
    photo = directory / "face_detection_input.npy"
    image = models.face_detection_input()
    np.save(photo, image)
    golden_files = (
        _golden_outputs(models.model_path(models.FACE_DETECTION), image, directory) if golden else []
    )
    data["name"] = "imx95-verdin-twin"
    data["models"] = [
        {
            "name": "face_detection",
            "path": f"{MODELS_DIR}/{CONVERTED_NAME}",
            "reference": f"{MODELS_DIR}/{REFERENCE_NAME}",
            "inputs": [{"file": photo.name}],
            "golden": [g.name for g in golden_files] or None,
            "thresholds": {
                "cosine": 0.99,
                "euclid": 0.90,
                "sqnr_db": 20,
                "top_k": 5,
                "top_k_agree": 0.8,
                "max_abs": 0.05,
            },
        }
    ]
    # The fastest run, not p50: twins share the host's CPUs with everything else running on it.
    data["performance"] = {
        "runs": runs,
        "warmup": 3,
        "min_speedup": 0.2,
        "regression_tolerance": regression_tolerance,
        "statistic": "min",
    }
    path = directory / "imx95-verdin-twin.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _golden_outputs(model: Path, image: np.ndarray, directory: Path) -> list[Path]:
    """The reference model's outputs for the photo, computed on the host: the "golden" files a
    model package ships (here from the same TFLite the twin's CPU runs, so they must match)."""
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(model))
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], image)
    interpreter.invoke()
    paths = []
    for index, detail in enumerate(interpreter.get_output_details()):
        path = directory / f"face_detection_golden{index}.npy"
        np.save(path, interpreter.get_tensor(detail["index"]))
        paths.append(path)
    return paths


@dataclass(frozen=True)
class Case:
    """One JUnit test case: the check, the board, pass/fail/skip and the sentence."""

    check: str
    target: str
    status: str
    message: str


@dataclass
class SuiteRun:
    returncode: int
    stdout: str
    stderr: str
    artifacts: Path
    seconds: float
    cases: list[Case] = field(default_factory=list)

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
        cases.append(Case(match.group(1), match.group(2), status, message))
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
    proc = subprocess.run(
        argv, cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    run = SuiteRun(proc.returncode, proc.stdout, proc.stderr, artifacts, time.monotonic() - started)
    if junit.exists():
        run.cases = read_junit(junit)
    return run


def run_on_twin(twin: Twin, profile: str | Path, workdir: Path, extra: Sequence[str] = ()) -> SuiteRun:
    return run_suite([twin.target], profile, workdir, twin.identity, twin.known_hosts, extra)


def fleet_access(twins: Sequence[Twin], directory: Path) -> tuple[Path, Path]:
    """One identity and one known_hosts file for a fleet of twins (the first twin's client key is
    authorized on every twin, through the harness's /run/twin/authorized_keys)."""
    directory.mkdir(parents=True, exist_ok=True)
    identity = twins[0].identity
    public = identity.with_suffix(".pub").read_text()
    for twin in twins[1:]:
        with (twin.directory / "run" / "authorized_keys").open("a") as keys:
            keys.write(public)
    known_hosts = directory / "known_hosts"
    known_hosts.write_text("".join(t.known_hosts.read_text() for t in twins))
    return identity, known_hosts
