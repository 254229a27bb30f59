# SPDX-License-Identifier: MIT
"""The acceptance suite, as a user runs it, against ROCK 5B (Rocket + Teflon) board twins.

The twins (tests/twins/boards_rocket.py) present the rocket module and /dev/accel/accel0, the
RK3588 device tree, a real TFLite external delegate at /usr/lib/libteflon.so (the twin delegate,
claiming the real face detector's builtin RESHAPE nodes) and the build manifest. The suite runs in
a subprocess with the twin copy of profile rock-5b; each fault twin must fail exactly its check
with its sentence, and the healthy twin must pass every check the profile does not skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from npu_tools import run_tool
from twins.boards_rocket import FAULTS, HEALTHY, rocket_assets, rocket_spec, rocket_twin_profile
from twins.boards_run import SuiteRun, run_on_twin

CHECKS = (
    "driver",
    "silicon",
    "runtime",
    "delegate",
    "outputs",
    "memory",
    "performance",
    "kernel_log",
    "determinism",
    "pairing",
)


@pytest.fixture(scope="module")
def suite_runs(twin_factory, tmp_path_factory: pytest.TempPathFactory) -> dict[str, SuiteRun]:  # noqa: ANN001
    work = tmp_path_factory.mktemp("rocket-suite")
    assets = rocket_assets(work / "assets")
    profile = rocket_twin_profile(work / "profile")
    boards = {"healthy": HEALTHY, **{name: board for name, (board, _, _) in FAULTS.items()}}
    return {
        name: run_on_twin(twin_factory(rocket_spec(board, assets)), profile, work / name)
        for name, board in boards.items()
    }


def test_healthy_twin_passes_every_check_the_profile_does_not_skip(suite_runs: dict[str, SuiteRun]) -> None:
    run = suite_runs["healthy"]
    results = run.results()
    assert set(results) == set(CHECKS), run.describe()
    statuses = {check: results[check].status for check in CHECKS}
    # Rocket has no NPU memory (SRAM, pool) to check: profile rock-5b has memory: null; and Teflon
    # runs TFLite models as they are, so no converter to pair with the runtime.
    assert statuses == {**dict.fromkeys(CHECKS, "pass"), "memory": "skip", "pairing": "skip"}, run.describe()
    assert run.returncode == 0, run.describe()
    assert "rocket driver 6.18.0-yocto-standard" in run.message("driver")
    assert "/dev/accel/accel0" in run.message("driver")
    assert "/usr/lib/libteflon.so present and loadable" in run.message("runtime")
    assert "offloaded" in run.message("delegate") and "(log agrees)" in run.message("delegate")


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_fault_fails_exactly_its_check(suite_runs: dict[str, SuiteRun], fault: str) -> None:
    _, check, phrase = FAULTS[fault]
    run = suite_runs[fault]
    assert run.failed() == {check}, run.describe()
    assert phrase in run.message(check), run.message(check)
    assert run.returncode != 0


def test_healthy_delegate_offloads_real_nodes_of_the_model(suite_runs: dict[str, SuiteRun]) -> None:
    """The count is the real interpreter's execution plan (check 4 cross-checks the delegate's log)."""
    message = suite_runs["healthy"].message("delegate")
    match = re.search(r"offloaded (\d+) of (\d+) nodes of face_detection", message)
    assert match is not None, message
    assert 1 <= int(match.group(1)) < int(match.group(2))


def test_npu_info_names_the_missing_rocket_driver_on_a_rocket_device_tree(tmp_path: Path) -> None:
    """A board whose device tree has the Rocket NPU cores but no rocket module is family rocket,
    with the missing module and accel node named (not "no NPU detected")."""
    core = tmp_path / "sys/firmware/devicetree/base/npu@fdab0000"
    core.mkdir(parents=True)
    (core / "compatible").write_bytes(b"rockchip,rk3588-rknn-core\x00")
    result = run_tool("npu-info", "--root", str(tmp_path), "--json")
    doc = result.json()
    assert doc["family"] == "rocket", result.stdout
    assert doc["driver"]["module_loaded"] is False and doc["driver"]["devices"] == []
    assert any("the rocket module is not loaded" in e for e in doc["errors"])
    assert any("no /dev/accel/accel* node" in e for e in doc["errors"])
