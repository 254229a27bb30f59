# SPDX-License-Identifier: MIT
"""benchmarks/fleet_probe.py, bench_fleet --breakdown's plugin in the suite's process: each part
of the suite's CPU is attributed to its own thread kind and main-thread phase, and the parts add
up to no more than the process spent."""

from __future__ import annotations

import json

import pytest
from twins.boards_run import REPO, run_on_twin

from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile


@pytest.fixture(scope="module")
def probed(twin_factory, tmp_path_factory):
    work = tmp_path_factory.mktemp("probe")
    twin = twin_factory(imx95_spec(HEALTHY, imx95_assets(work / "assets")))
    profile = imx95_twin_profile(work / "profile")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(REPO / "benchmarks"))
        patch.setenv("NPU_FLEET_PROBE", str(work / "probe.json"))
        run = run_on_twin(twin, profile, work / "run", ["-p", "fleet_probe"])
    assert run.returncode == 0, run.describe()
    return run, json.loads((work / "probe.json").read_text())


def test_main_thread_phases_in_order(probed):
    _, probe = probed
    assert list(probe["main"]) == ["start-up", "examination", "tests", "reports"]
    assert all(seconds >= 0 for seconds in probe["main"].values())
    assert probe["main"]["start-up"] > 0.05  # pytest, numpy and paramiko are imported there


def test_threads_by_kind(probed):
    _, probe = probed
    counts = probe["thread_counts"]
    assert counts["board"] == 1  # one examination thread per board
    assert counts["transport"] == 1  # one SSH connection per board
    assert counts.get("stdin", 0) >= 1  # the tools and the inputs travel on stdin
    assert probe["threads"]["board"] > probe["threads"]["transport"] > 0


def test_parts_within_the_process(probed):
    run, probe = probed
    parts = sum(probe["main"].values()) + sum(probe["threads"].values())
    assert parts <= probe["process"] + 0.01
    assert probe["process"] <= run.cpu_seconds + 0.01
