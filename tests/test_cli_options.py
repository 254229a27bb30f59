# SPDX-License-Identifier: MIT
"""The suite's command line as a user meets it: bad input ends in one sentence and a non-zero exit,
never a traceback; --accept-new-host-key, --strict, --lava-signals and --baseline do what they say."""

from __future__ import annotations

import socket
import subprocess
import sys

import numpy as np
import pytest
import yaml
from twins.boards_run import REPO, run_on_twin, run_suite

from npu_accept.paths import packaged_profiles_dir
from npu_accept.sim.imx95 import (
    HEALTHY,
    MODELS_DIR,
    REFERENCE_NAME,
    imx95_assets,
    imx95_spec,
    imx95_twin_profile,
)

USAGE_ERROR = 4  # pytest's exit status for a usage error
NO_BOARD = 3  # the plugin's exit status when no board could be examined


def _suite(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "pytests", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin"},
    )


def _one_sentence_error(proc: subprocess.CompletedProcess[str], code: int, words: str) -> None:
    text = proc.stdout + proc.stderr
    assert proc.returncode == code, text
    assert words in text, text
    assert "Traceback" not in text, text


@pytest.fixture(scope="module")
def twin_setup(twin_factory, tmp_path_factory):
    work = tmp_path_factory.mktemp("cli")
    assets = imx95_assets(work / "assets")
    twin = twin_factory(imx95_spec(HEALTHY, assets))
    return twin, imx95_twin_profile(work / "profile", runs=5), work


def test_missing_target():
    _one_sentence_error(_suite("--board", "imx95-verdin"), USAGE_ERROR, "needs a board: add --target")


def test_missing_board():
    _one_sentence_error(
        _suite("--target", "root@127.0.0.1"), USAGE_ERROR, "needs a board profile: add --board"
    )


def test_bad_target_string():
    proc = _suite("--target", "root@@bad host", "--board", "imx95-verdin")
    assert proc.returncode == USAGE_ERROR and "Traceback" not in proc.stdout + proc.stderr, proc.stderr


def test_unknown_profile():
    _one_sentence_error(
        _suite("--target", "root@127.0.0.1", "--board", "imx96-nope"),
        USAGE_ERROR,
        "Unknown board profile 'imx96-nope'; use one of:",
    )


def test_bad_profile_names_file_and_key(tmp_path):
    data = yaml.safe_load((packaged_profiles_dir() / "imx95-verdin.yaml").read_text())
    data["driver"]["min_versoin"] = "1.0"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(data))
    _one_sentence_error(
        _suite("--target", "root@127.0.0.1", "--board", str(bad)),
        USAGE_ERROR,
        f"Board profile {bad}: key 'driver.min_versoin' is invalid (unknown key)",
    )


def test_not_a_baseline_file(tmp_path):
    junk = tmp_path / "baseline.json"
    junk.write_text('{"hello": 1}')
    _one_sentence_error(
        _suite("--target", "root@127.0.0.1", "--board", "imx95-verdin", "--baseline", str(junk)),
        USAGE_ERROR,
        "is not an npu-accept-baseline/1 file",
    )


def test_unreachable_target(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: connections are refused
        known = tmp_path / "known_hosts"
        known.write_text("")
        proc = _suite(
            "--target",
            f"root@127.0.0.1:{port}",
            "--board",
            "imx95-verdin",
            "--known-hosts",
            str(known),
            "--lava-signals",
        )
    assert proc.returncode == NO_BOARD, proc.stdout + proc.stderr
    assert f"127.0.0.1:{port}" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
    assert "<LAVA_SIGNAL_TESTCASE TEST_CASE_ID=silicon RESULT=fail>" in proc.stdout


def test_unknown_host_key_is_refused_without_opt_in(twin_setup, tmp_path):
    twin, profile, _ = twin_setup
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    proc = _suite(
        "--target",
        twin.target,
        "--board",
        str(profile),
        "--identity",
        str(twin.identity),
        "--known-hosts",
        str(empty),
    )
    _one_sentence_error(proc, NO_BOARD, "--accept-new-host-key")
    assert empty.read_text() == ""


def test_accept_new_host_key_records_it(twin_setup, tmp_path):
    twin, profile, _ = twin_setup
    known = tmp_path / "known_hosts"
    known.write_text("")
    run = run_suite([twin.target], profile, tmp_path / "run", twin.identity, known, ["--accept-new-host-key"])
    assert run.returncode == 0, run.describe()
    assert twin.host_public_key.split()[1] in known.read_text()


def test_lava_signals(twin_setup, tmp_path):
    twin, profile, _ = twin_setup
    run = run_on_twin(twin, profile, tmp_path / "run", ["--lava-signals"])
    assert run.returncode == 0, run.describe()
    for check in ("driver", "silicon", "runtime", "delegate", "outputs", "memory", "performance"):
        assert f"<LAVA_SIGNAL_TESTCASE TEST_CASE_ID={check} RESULT=pass>" in run.stdout


def test_board_temp_files_are_removed(twin_setup, tmp_path):
    twin, profile, _ = twin_setup
    before = set(twin.board_path("/tmp").iterdir())
    run = run_on_twin(twin, profile, tmp_path / "run")
    assert run.returncode == 0, run.describe()
    assert set(twin.board_path("/tmp").iterdir()) == before


def _generic_twin_profile(work) -> str:
    """generic-cpu.yaml pointed at the model the twin has: a CPU-only board."""
    data = yaml.safe_load((packaged_profiles_dir() / "generic-cpu.yaml").read_text())
    data["models"][0].update(
        name="face_detection",
        path=f"{MODELS_DIR}/{REFERENCE_NAME}",
        inputs=[{"random": {"shape": [1, 128, 128, 3], "dtype": "float32", "low": -1, "high": 1, "seed": 0}}],
    )
    data["performance"].update(runs=5, warmup=1)
    path = work / "generic-twin.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_generic_cpu_board_passes_with_skips_and_strict_fails_them(twin_setup, tmp_path):
    twin, _, work = twin_setup
    profile = _generic_twin_profile(work)
    run = run_on_twin(twin, profile, tmp_path / "lenient")
    assert run.returncode == 0, run.describe()
    skipped = {c.check for c in run.cases if c.status == "skip"}
    assert skipped == {"driver", "silicon", "runtime", "delegate", "memory", "kernel_log", "pairing"}, (
        run.describe()
    )
    assert {c.check for c in run.cases if c.status == "pass"} == {"outputs", "performance", "determinism"}
    strict = run_on_twin(twin, profile, tmp_path / "strict", ["--strict"])
    assert strict.returncode == 1, strict.describe()
    assert strict.failed() == skipped, strict.describe()
    assert "Skipped check is a failure under --strict" in strict.results()["driver"].message
    np.testing.assert_equal(sorted(p.name for p in (run.artifacts).iterdir())[:1], ["baseline.json"])


def test_fleet_with_an_unreachable_board_judges_the_others(twin_setup, tmp_path):
    twin, profile, _ = twin_setup
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"root@127.0.0.1:{sock.getsockname()[1]}"
        run = run_suite([twin.target, dead], profile, tmp_path / "run", twin.identity, twin.known_hosts)
    assert run.returncode == 1, run.describe()
    assert run.failed(twin.target) == set() and len(run.results(twin.target)) == 10, run.describe()
    assert run.failed(dead) == {
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
    assert "connection refused" in run.results(dead)["driver"].message
    assert f"{dead} (imx95-verdin-twin): NOT ACCEPTED — root cause: Cannot reach {dead}" in run.stdout


def test_same_target_twice():
    _one_sentence_error(
        _suite("--target", "root@127.0.0.1", "--target", "root@127.0.0.1", "--board", "imx95-verdin"),
        USAGE_ERROR,
        "A --target is given twice; name each board once.",
    )


def test_unwritable_artifacts_is_a_usage_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    _one_sentence_error(
        _suite("--target", "root@127.0.0.1", "--board", "imx95-verdin", "--artifacts", str(blocker / "out")),
        USAGE_ERROR,
        "cannot be written",
    )


def test_reports_that_cannot_be_written_do_not_crash_the_session(twin_setup, tmp_path):
    twin, profile, _ = twin_setup
    artifacts = tmp_path / "run" / "artifacts"
    (artifacts / "report.md").mkdir(parents=True)  # a directory where the report goes
    run = run_on_twin(twin, profile, tmp_path / "run")
    assert run.returncode == 0, run.describe()
    assert "the reports could not be written to" in run.stderr and "Traceback" not in run.stderr, run.stderr


def test_reports_name_every_board_even_when_no_test_ran(twin_setup, tmp_path):
    twin, profile, _ = twin_setup
    run = run_on_twin(twin, profile, tmp_path / "run", ["-k", "no_such_check"])
    assert run.returncode == 5, run.describe()  # pytest's "no tests ran"
    board = run.summary()[twin.target]
    assert board["accepted"] is False and "was not examined" in board["root_cause"]


def test_keep_tools_leaves_them_for_the_next_run_which_does_not_send_them(twin_setup, tmp_path):
    import shutil

    twin, profile, _ = twin_setup
    first = run_on_twin(twin, profile, tmp_path / "first", ["--keep-tools"])
    kept = [p for p in twin.board_path("/tmp").iterdir() if p.name.startswith("npu-accept-tools-")]
    try:
        assert first.returncode == 0, first.describe()
        assert len(kept) == 1 and (kept[0] / ".complete").is_file() and (kept[0] / "npu-run").is_file()
        (kept[0] / "marker").write_text("a re-sent archive would replace this directory")
        second = run_on_twin(twin, profile, tmp_path / "second", ["--keep-tools"])
        assert second.returncode == 0, second.describe()
        assert (kept[0] / "marker").is_file()
    finally:
        for path in kept:
            shutil.rmtree(path, ignore_errors=True)
