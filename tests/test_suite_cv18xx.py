# SPDX-License-Identifier: MIT
"""npu-run's cvi backend and npu-info's CV18xx probe, against a stand-in model_runner.

The stand-in (tests/twins/cv18xx/fake_model_runner.py, built per chip family by
tests/twins/boards_cv18xx.py) has model_runner's command line and output; its results are
recomputed here with numpy. Board trees (npu-info --root) carry the faults the suite must catch:
a model for another chip, /dev/cvi-tpu0 missing, an ION carveout too small, a model whose results
drift from its reference (model_runner's compare fails).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from npu_tools import TOOLS_DIR, assert_one_sentence_usage_error, run_tool, validate
from twins.boards_cv18xx import (
    CLASSIFIER_INPUT,
    CLASSIFIER_OUTPUT,
    ION_BYTES,
    MIB,
    Cv18xxBoard,
    board_tree,
    build_model_runner,
    cvimodel,
    dmesg_program,
    reference_outputs,
)

from npu_accept.paths import packaged_profiles_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cvi")


@pytest.fixture(scope="module")
def runner(work: Path) -> Path:
    return build_model_runner(work, "cv181x")


@pytest.fixture(scope="module")
def board(work: Path, runner: Path) -> Path:
    return board_tree(work / "board", Cv18xxBoard(), runner)


@pytest.fixture(scope="module")
def model(work: Path) -> Path:
    path = work / "classifier_cv181x.cvimodel"
    path.write_bytes(cvimodel("cv181x", [CLASSIFIER_INPUT], [CLASSIFIER_OUTPUT]))
    return path


@pytest.fixture(scope="module")
def image(work: Path) -> tuple[Path, np.ndarray]:
    array = np.random.default_rng(3).uniform(-1, 1, CLASSIFIER_INPUT.shape).astype(np.float32)
    path = work / "in0.npy"
    np.save(path, array)
    return path, array


def npu_run(runner: Path, board: Path, *args: str | Path, log: Path | None = None):  # noqa: ANN201
    env = dict(os.environ, NPU_RUN_MODEL_RUNNER=str(runner), NPU_RUN_DT_ROOT=str(board))
    if log is not None:
        env["FAKE_MODEL_RUNNER_LOG"] = str(log)
    return run_tool("npu-run", *map(str, args), env=env)


# ------------------------------------------------------------------ the cvi backend


def test_cvi_backend_runs_the_model_and_returns_its_outputs(
    runner: Path, board: Path, model: Path, image, work: Path
) -> None:
    path, array = image
    out = work / "out-healthy"
    run = npu_run(
        runner,
        board,
        "--model",
        model,
        "--input",
        path,
        "--output-dir",
        out,
        "--backend",
        "cvi",
        "--runs",
        "3",
        "--json",
    )
    assert run.code == 0, run.stderr + run.stdout
    doc = run.json()
    validate(doc, "npu-run")
    assert doc["backend"] == "cvi" and doc["errors"] == []
    assert doc["bindings"].endswith("(cvimodel 1.4 for cv181x)")
    assert [o["name"] for o in doc["outputs"]] == ["prob"]
    assert doc["inputs"][0]["scale"] == 64.0
    expected = reference_outputs([array], [CLASSIFIER_INPUT], [CLASSIFIER_OUTPUT])[0]
    np.testing.assert_array_equal(np.load(out / doc["outputs"][0]["file"]), expected)
    assert len(doc["latency_ms"]) == 1 and doc["latency_ms"][0] >= 0


def test_model_for_another_chip_is_refused_before_it_runs(
    runner: Path, board: Path, image, work: Path
) -> None:
    wrong = work / "classifier_cv180x.cvimodel"
    wrong.write_bytes(cvimodel("cv180x", [CLASSIFIER_INPUT], [CLASSIFIER_OUTPUT]))
    log = work / "runner-wrong-chip.log"
    run = npu_run(
        runner,
        board,
        "--model",
        wrong,
        "--input",
        image[0],
        "--output-dir",
        work / "out-wrong",
        "--backend",
        "cvi",
        "--json",
        log=log,
    )
    assert run.code == 1 and run.stdout == ""
    error = run.stderr
    assert "built for cv180x" in error and "this board is cv181x" in error
    assert "--processor cv181x" in error
    assert not log.exists(), "model_runner ran although the chips differ"


def test_version_1_0_header_means_cv183x(runner: Path, board: Path, image, work: Path) -> None:
    old = work / "old.cvimodel"
    old.write_bytes(cvimodel("", [CLASSIFIER_INPUT], [CLASSIFIER_OUTPUT], version=(1, 0)))
    run = npu_run(
        runner,
        board,
        "--model",
        old,
        "--input",
        image[0],
        "--output-dir",
        work / "o10",
        "--backend",
        "cvi",
        "--json",
    )
    assert run.code == 1 and "built for cv183x" in run.stderr


def test_runtime_for_another_chip_is_reported_in_its_words(
    work: Path, board: Path, model: Path, image
) -> None:
    # The device tree says cv181x but the installed runtime was built with CHIP=cv180x.
    other = build_model_runner(work, "cv180x")
    run = npu_run(
        other,
        board,
        "--model",
        model,
        "--input",
        image[0],
        "--output-dir",
        work / "o-rt",
        "--backend",
        "cvi",
        "--json",
    )
    assert run.code == 1
    assert "built for cv181x and this runtime is for cv180x" in run.stderr


def test_not_a_cvimodel_is_one_sentence(runner: Path, board: Path, image, work: Path) -> None:
    bogus = work / "model.tflite"
    bogus.write_bytes(b"TFL3" + bytes(60))
    run = npu_run(
        runner,
        board,
        "--model",
        bogus,
        "--input",
        image[0],
        "--output-dir",
        work / "o-b",
        "--backend",
        "cvi",
        "--json",
    )
    assert_one_sentence_usage_error(run, "not a cvimodel")


def test_wrong_number_of_inputs_is_one_sentence(
    runner: Path, board: Path, model: Path, image, work: Path
) -> None:
    run = npu_run(
        runner,
        board,
        "--model",
        model,
        "--input",
        image[0],
        "--input",
        image[0],
        "--output-dir",
        work / "o-n",
        "--backend",
        "cvi",
        "--json",
    )
    assert_one_sentence_usage_error(run, "1 input(s)", "2 --input")


def test_board_without_cv18xx_device_tree_is_a_failed_run(
    runner: Path, model: Path, image, work: Path
) -> None:
    empty = work / "no-dt"
    empty.mkdir(exist_ok=True)
    run = npu_run(
        runner,
        empty,
        "--model",
        model,
        "--input",
        image[0],
        "--output-dir",
        work / "o-dt",
        "--backend",
        "cvi",
        "--json",
    )
    assert run.code == 1 and "chip family" in run.stderr


def test_drifting_model_fails_model_runners_compare(runner: Path, model: Path, image, work: Path) -> None:
    """model_runner -r is the board-side golden check: a model drifting from its reference fails."""
    import subprocess

    path, array = image
    inputs = work / "golden_in.npz"
    np.savez(inputs, input=array)
    golden = reference_outputs([array], [CLASSIFIER_INPUT], [CLASSIFIER_OUTPUT])[0]
    reference = work / "golden_ref.npz"
    np.savez(reference, prob=golden)
    good = subprocess.run(
        [sys.executable, str(runner), "-i", str(inputs), "-m", str(model), "-r", str(reference)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert good.returncode == 0 and "Compare result: 1/1 passed." in good.stdout
    drift = work / "drift.cvimodel"
    drift.write_bytes(cvimodel("cv181x", [CLASSIFIER_INPUT], [CLASSIFIER_OUTPUT], skew=200))
    bad = subprocess.run(
        [sys.executable, str(runner), "-i", str(inputs), "-m", str(drift), "-r", str(reference)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 1
    assert "Compare Failed." in bad.stdout and "Compare result: 0/1 passed." in bad.stdout


# ------------------------------------------------------------------ npu-info's probe


def probe(root: Path, board: Cv18xxBoard, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201 (FamilyFacts)
    if str(TOOLS_DIR) not in sys.path:
        sys.path.insert(0, str(TOOLS_DIR))
    from npu_target.probes import cvitek
    from npu_target.probes.common import ProbeContext

    bindir = dmesg_program(root.parent / f"{root.name}-bin", board)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    ctx = ProbeContext(root=root)
    assert cvitek.detect(ctx)
    return cvitek.probe(ctx)


def test_healthy_tree_reports_driver_chip_runtime_and_ion(
    tmp_path: Path, runner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = Cv18xxBoard()
    facts = probe(board_tree(tmp_path / "b", board, runner), board, monkeypatch)
    assert facts.errors == []
    assert facts.driver["name"] == "cv181x_tpu" and facts.driver["chip"] == "cv181x"
    assert facts.driver["devices"] == ["/dev/cvi-tpu0"] and facts.driver["module_loaded"]
    assert facts.chip_id == "3"
    assert facts.memory["ion"] == {
        "heap": "carveout",
        "size": ION_BYTES,
        "source": "/sys/kernel/debug/ion/cvi_carveout_heap_dump/total_mem",
    }
    assert facts.runtime["path"] == "/usr/lib/libcviruntime.so"
    assert facts.runtime["model_runner"] == "/usr/bin/model_runner"


def test_missing_tpu_device_is_reported(
    tmp_path: Path, runner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = Cv18xxBoard(tpu_device=False, modules_loaded=False)
    facts = probe(board_tree(tmp_path / "b", board, runner), board, monkeypatch)
    assert facts.driver["devices"] == []
    assert any("/dev/cvi-tpu0 is missing" in e for e in facts.errors)
    assert any("no CV18xx TPU module is loaded" in e for e in facts.errors)


def test_missing_chip_id_line_names_the_base_module(
    tmp_path: Path, runner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = Cv18xxBoard(chip_id=None)
    facts = probe(board_tree(tmp_path / "b", board, runner), board, monkeypatch)
    assert facts.chip_id is None
    assert any("cv181x_base" in e for e in facts.errors)


def test_ion_is_read_from_the_device_tree_without_debugfs(
    tmp_path: Path, runner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = Cv18xxBoard()
    root = board_tree(tmp_path / "b", board, runner)
    (root / "sys/kernel/debug/ion/cvi_carveout_heap_dump/total_mem").unlink()
    facts = probe(root, board, monkeypatch)
    assert facts.memory["ion"]["size"] == ION_BYTES
    assert facts.memory["ion"]["source"].endswith("/reserved-memory/ion")


# ------------------------------------------------------------------ check 6 on the facts


def ion_verdict(ion: dict | None):  # noqa: ANN201 (CheckResult)
    from npu_accept.checks.registry import run_check
    from npu_accept.facts import BoardFacts
    from npu_accept.profile import load_profile

    profile = load_profile("milkv-duo256m", packaged_profiles_dir())
    facts = BoardFacts(target="twin", info={"memory": {"sram": None, "pools": [], "ion": ion}})
    return run_check("memory", facts, profile)


def test_ion_of_the_overlay_passes() -> None:
    verdict = ion_verdict({"heap": "carveout", "size": ION_BYTES, "source": "debugfs"})
    assert verdict.status == "pass", verdict.message


def test_ion_too_small_fails_with_the_fix(
    tmp_path: Path, runner: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The 64 MiB Duo's carveout (26.8 MiB) on a board whose models need 32 MiB.
    board = Cv18xxBoard(ion_bytes=0x1ACD000)
    facts = probe(board_tree(tmp_path / "b", board, runner), board, monkeypatch)
    verdict = ion_verdict(facts.memory["ion"])
    assert verdict.status == "fail" and verdict.cause == "ion-size"
    assert "26.8 MiB" in verdict.message and "sg2002-milkv-duo256m-tpu-ion" in verdict.message


def test_missing_ion_fails() -> None:
    verdict = ion_verdict(None)
    assert verdict.status == "fail" and verdict.cause == "ion-missing"


def test_profile_budget_is_what_the_overlay_leaves_the_tpu() -> None:
    from npu_accept.profile import load_profile

    profile = load_profile("milkv-duo256m", packaged_profiles_dir())
    assert profile.family == "cvitek-tpu"
    assert profile.memory["ion_min_bytes"] <= ION_BYTES - 22 * MIB
