# SPDX-License-Identifier: MIT
"""The acceptance suite, run as a user runs it, against i.MX95 board twins: the healthy twin passes
every check, each fault twin fails exactly its check with its sentence, slightly-off outputs pass,
the A0 field-report twin (A0 + constant outputs) is summed up as A0 silicon, a latency regression against
a --baseline fails, and a fleet judges each board on its own."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest
from twins.boards_run import SuiteRun, fleet_access, run_on_twin, run_suite

from npu_accept.sim.delegate.convert import convert
from npu_accept.sim.imx95 import (
    A0_FIELD_REPORT,
    FAULTS,
    HEALTHY,
    SLIGHTLY_OFF,
    imx95_assets,
    imx95_spec,
    imx95_twin_profile,
    slowed_model,
)

ALL_CHECKS = {
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
}
A0_FIELD_REPORT_SENTENCE = (
    "NPU outputs are degenerate and the SoC is i.MX95 A0 (revision 1.0): NPU acceleration "
    "is supported on B0 silicon only — this board cannot pass."
)


@pytest.fixture(scope="module")
def matrix(twin_factory, tmp_path_factory) -> dict[str, SuiteRun]:
    """Every i.MX95 twin judged once by the real suite (three suites at a time)."""
    work = tmp_path_factory.mktemp("neutron-suite")
    assets = imx95_assets(work / "assets")
    profile = imx95_twin_profile(work / "profile")
    # The regressed build computes its graph three times and so has three times the outputs: the
    # face detector's golden files do not apply to it.
    profile_without_golden = imx95_twin_profile(work / "profile-without-golden", golden=False)
    # A regressed build: the same model computing its graph three times (see slowed_model).
    slow_reference = slowed_model(assets.reference, work / "slow_reference.tflite")
    slow_converted = work / "slow_converted.tflite"
    convert(slow_reference, slow_converted)
    slow_build = replace(HEALTHY, name="imx95-slow-build", converted=slow_converted, reference=slow_reference)
    boards = {
        "healthy": HEALTHY,
        "slightly-off": SLIGHTLY_OFF,
        "a0-field-report": A0_FIELD_REPORT,
        "regression": slow_build,
        **{name: board for name, (board, _, _) in FAULTS.items()},
    }
    twins = {name: twin_factory(imx95_spec(board, assets)) for name, board in boards.items()}
    runs = {"healthy": run_on_twin(twins["healthy"], profile, work / "healthy")}
    baseline = runs["healthy"].artifacts / "baseline.json"
    assert baseline.is_file(), runs["healthy"].describe()
    identity, known_hosts = fleet_access([twins["healthy"], twins["a0"]], work / "fleet-access")

    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {
            name: pool.submit(run_on_twin, twins[name], profile, work / name)
            for name in boards
            if name not in ("healthy", "regression")
        }
        futures["regression"] = pool.submit(
            run_on_twin,
            twins["regression"],
            profile_without_golden,
            work / "regression",
            ["--baseline", str(baseline)],
        )
        futures["baseline-ok"] = pool.submit(
            run_on_twin, twins["healthy"], profile, work / "baseline-ok", ["--baseline", str(baseline)]
        )
        futures["fleet"] = pool.submit(
            run_suite,
            [twins["healthy"].target, twins["a0"].target],
            profile,
            work / "fleet",
            identity,
            known_hosts,
            ["--lava-signals"],
        )
        runs.update({name: future.result() for name, future in futures.items()})
    runs["targets"] = {name: twin.target for name, twin in twins.items()}  # type: ignore[assignment]
    return runs


def test_healthy_twin_passes_every_check(matrix):
    run = matrix["healthy"]
    assert run.returncode == 0, run.describe()
    assert {c: r.status for c, r in run.results().items()} == dict.fromkeys(ALL_CHECKS, "pass")
    assert "ACCEPTED" in run.stdout and "NOT ACCEPTED" not in run.stdout
    assert "match the CPU and golden reference" in run.message("outputs")
    # A checkout's run (`pytest pytests …`) prints no warning of its own: a user reads the
    # closing line as the suite's verdict.
    closing = run.stdout.strip().splitlines()[-1]
    assert "passed" in closing and "warning" not in closing, run.stdout[-2000:]


def test_slightly_off_outputs_within_tolerance_pass(matrix):
    run = matrix["slightly-off"]
    assert run.returncode == 0, run.describe()
    assert run.failed() == set()
    row = next(
        line
        for line in (run.artifacts / "report.md").read_text().splitlines()
        if line.startswith("| face_detection | out0 | CPU |")
    )
    max_abs = float(row.split("|")[8])
    assert 0 < max_abs <= 0.05, row  # really off, and within the profile's max_abs


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_twin_fails_exactly_its_check(matrix, fault):
    _, check, words = FAULTS[fault]
    run = matrix[fault]
    assert run.returncode == 1, run.describe()
    assert run.failed() == {check}, run.describe()
    message = run.results()[check].message
    assert words in message, message
    assert "Traceback" not in run.stdout + run.stderr


def test_a0_message_names_b0_silicon(matrix):
    message = matrix["a0"].results()["silicon"].message
    assert message == (
        "The SoC is i.MX95 A0 (revision 1.0): NPU acceleration is supported on B0 "
        "silicon only — this board cannot pass; use a board with revision 2.0."
    ), message


def test_degenerate_outputs_are_named_degenerate(matrix):
    message = matrix["degenerate-outputs"].results()["outputs"].message
    assert "degenerate" in message or "constant" in message, message


def test_a0_field_report_twin_summary_names_a0_silicon(matrix):
    run = matrix["a0-field-report"]
    assert run.returncode == 1, run.describe()
    assert run.failed() == {"silicon", "outputs"}, run.describe()
    assert A0_FIELD_REPORT_SENTENCE in run.stdout, run.stdout[-2000:]
    summary = json.loads((run.artifacts / "summary.json").read_text())
    (board,) = summary.values()
    assert board["root_cause"] == A0_FIELD_REPORT_SENTENCE
    assert A0_FIELD_REPORT_SENTENCE in (run.artifacts / "report.md").read_text()
    assert A0_FIELD_REPORT_SENTENCE in (run.artifacts / "report.html").read_text()


def test_latency_regression_against_baseline_fails(matrix):
    run = matrix["regression"]
    assert run.returncode == 1, run.describe()
    assert run.failed() == {"performance"}, run.describe()
    assert "regressed: min" in run.message("performance")


def test_latency_within_baseline_tolerance_passes(matrix):
    run = matrix["baseline-ok"]
    assert run.returncode == 0, run.describe()
    assert "of the baseline" in run.message("performance")


def test_fleet_judges_each_board_on_its_own(matrix):
    run = matrix["fleet"]
    healthy, a0 = matrix["targets"]["healthy"], matrix["targets"]["a0"]
    assert run.returncode == 1, run.describe()
    assert run.failed(healthy) == set() and len(run.results(healthy)) == len(ALL_CHECKS), run.describe()
    assert run.failed(a0) == {"silicon"}, run.describe()
    assert f"{healthy} (imx95-verdin-twin): ACCEPTED" in run.stdout
    safe_a0 = a0.replace("@", "_").replace(":", "_")
    assert f"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=silicon-{safe_a0} RESULT=fail>" in run.stdout
