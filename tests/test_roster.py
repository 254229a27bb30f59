# SPDX-License-Identifier: MIT
"""The roster (npu_accept.checks.roster) is the only list of checks: the suite's test files, the
oeqa methods, the reports' headings, the summary's ranks and docs/design.md are held to it; the
suite runs the checks in number order and collects only what the selected checks need (a twin
counts what it was sent: `-k driver` runs no model, `-k outputs` runs each model once)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from twins.boards_run import run_on_twin

from npu_accept.checks import CHECK_ORDER, CHECK_TITLES, roster, summary
from npu_accept.facts import Work
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile

ROOT = Path(__file__).resolve().parents[1]


def test_the_suite_has_one_test_file_per_check_and_each_judges_its_own() -> None:
    files = sorted(p.stem for p in (ROOT / "pytests").glob("test_*.py"))
    assert files == sorted(c.test_module for c in roster.ROSTER)
    for check in roster.ROSTER:
        source = (ROOT / "pytests" / f"{check.test_module}.py").read_text()
        assert f'judge("{check.id}")' in source, check.test_module
        assert ast.get_docstring(ast.parse(source)).startswith(f"Check {check.number} — "), check.test_module


def test_the_oeqa_case_has_one_method_per_check() -> None:
    source = (ROOT / "meta-npu" / "lib" / "oeqa" / "runtime" / "cases" / "npu.py").read_text()
    methods = re.findall(r"def (test_npu_(\d+)_(\w+))\(self\):\s+self\._judge\(\"(\w+)\"\)", source)
    assert [(int(n), ident) for _, n, ident, judged in methods if ident == judged] == [
        (c.number, c.id) for c in roster.ROSTER
    ]


def test_order_titles_and_ranks_come_from_the_roster() -> None:
    assert CHECK_ORDER == tuple(c.id for c in roster.ROSTER)
    assert [c.number for c in roster.ROSTER] == list(range(1, len(roster.ROSTER) + 1))
    assert CHECK_TITLES["pairing"] == "10. Model and runtime pairing"
    assert set(summary._RANK) == {c.id for c in roster.ROSTER} - {"silicon"}


def test_docs_design_lists_the_roster() -> None:
    text = (ROOT / "docs" / "design.md").read_text()
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \| (\d+\. [^|]+?) \|", text, re.MULTILINE)
    assert [(int(n), ident, title) for n, ident, title in rows] == [
        (c.number, c.id, c.heading) for c in roster.ROSTER
    ]


def test_a_stretch_of_the_examination_is_shared_by_the_selected_checks_that_need_it() -> None:
    work = [
        Work(1.0),  # connecting, npu-info: every check's
        Work(7.0, roster.serving(roster.MODELS)),  # the 7 checks that need the models run
        Work(2.0, roster.serving(roster.TIMED_RUNS)),
        Work(0.5, frozenset({"kernel_log"})),
    ]
    full = roster.check_seconds(work, {"outputs": 0.25})
    assert list(full) == list(CHECK_ORDER) and sum(full.values()) == pytest.approx(10.75)
    assert full["driver"] == pytest.approx(0.1)  # its share of connecting and npu-info, no model
    assert full["performance"] == pytest.approx(0.1 + 1.0 + 2.0)  # the timed loop is its own
    assert full["outputs"] == pytest.approx(0.1 + 1.0 + 0.25)  # and the comparison it judged
    assert full["kernel_log"] == pytest.approx(0.1 + 0.5)
    # a selected check carries what served no other selected one: the times still add up
    assert roster.check_seconds(work, {}, ["driver", "kernel_log"]) == {
        "driver": pytest.approx(5.0),
        "kernel_log": pytest.approx(5.5),
    }


def _examined_seconds(artifacts: Path) -> float:
    (timings,) = artifacts.glob("*/timings.json")
    return sum(json.loads(timings.read_text()).values())


def _npu_runs(artifacts: Path) -> list[str]:
    traces = list(artifacts.glob("*/trace.jsonl"))
    assert traces, f"no trace.jsonl under {artifacts}"
    records = [json.loads(line) for trace in traces for line in trace.read_text().splitlines()]
    assert records[0]["schema"] == "npu-accept-trace/1"
    return [r["command"] for r in records[1:] if r.get("kind") == "run" and "/npu-run " in r["command"]]


@pytest.fixture(scope="module")
def healthy(twin_factory, tmp_path_factory):  # noqa: ANN001, ANN201 - the twin and its profile
    work = tmp_path_factory.mktemp("roster")
    twin = twin_factory(imx95_spec(HEALTHY, imx95_assets(work / "assets")))
    return twin, imx95_twin_profile(work / "profile"), work


@pytest.mark.twin
def test_k_driver_runs_no_model_and_a_full_run_runs_them_in_number_order(healthy) -> None:  # noqa: ANN001
    twin, profile, work = healthy
    before = twin.cpu_seconds()
    # run_suite passes -q; -vv makes the -v of `npu-accept run -v`
    driver = run_on_twin(twin, profile, work / "driver", ["-k", "driver", "-vv"])
    driver_board = twin.cpu_seconds() - before
    assert driver.returncode == 0, driver.describe()
    assert [c.check for c in driver.cases] == ["driver"], driver.cases
    assert _npu_runs(driver.artifacts) == [], "-k driver ran a model on the board"
    summary_json = json.loads((driver.artifacts / "summary.json").read_text())
    board = next(iter(summary_json.values()))
    assert board["accepted"] is False  # one check judged: the board is not accepted on it
    assert "only 1 of 10 checks were selected" in driver.stdout
    # -v prints the trace live: the npu-info command the board ran, as it ran
    assert any("npu_accept.trace" in line and "npu-info" in line for line in driver.stdout.splitlines())

    outputs = run_on_twin(twin, profile, work / "outputs", ["-k", "outputs"])
    assert outputs.returncode == 0, outputs.describe()
    runs = _npu_runs(outputs.artifacts)
    assert runs and all("--runs 1 --warmup 0" in r for r in runs), runs

    before = twin.cpu_seconds()
    full = run_on_twin(twin, profile, work / "full", [])
    full_board = twin.cpu_seconds() - before
    assert full.returncode == 0, full.describe()
    assert [c.check for c in full.cases] == [c.id for c in roster.ROSTER]
    assert "npu_accept.trace" not in full.stdout  # without -v the trace is only in the artifacts
    full_runs = _npu_runs(full.artifacts)
    assert any("--runs 1 " not in r for r in full_runs), "the full run did not time the models"
    # what it costs: docs/acceptance.md gives the figures of one such run
    print(
        f"-k driver: {driver.seconds:.1f} s wall, board CPU {driver_board:.2f} s, suite CPU "
        f"{driver.cpu_seconds:.2f} s; full run: {full.seconds:.1f} s wall, board CPU {full_board:.2f} s, "
        f"suite CPU {full.cpu_seconds:.2f} s"
    )
    assert driver_board < full_board / 2
    # Each JUnit time is that check's own work: the board's examination (timings.json) shared
    # out by what each check needs, plus its judging, so the times add up to the examination
    # (pytest's own times put it all in the first test's setup), and the timed loop is check 7's.
    examined = _examined_seconds(full.artifacts)
    times = {c.check: c.seconds for c in full.cases}
    print(f"JUnit times of the full run (examined {examined:.2f} s): {times}")
    assert sum(times.values()) == pytest.approx(examined, rel=0.1, abs=0.05)
    assert times["driver"] < examined / 5
    # the timed loop is check 7's, the determinism re-runs check 9's: each more than check 3's
    # share of the one run of the models
    assert min(times["performance"], times["determinism"]) > times["runtime"] > times["driver"], times
    # -k driver: the one selected check carries its whole (short) run
    assert driver.cases[0].seconds == pytest.approx(_examined_seconds(driver.artifacts), rel=0.1, abs=0.05)
