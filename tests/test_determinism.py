# SPDX-License-Identifier: MIT
"""The determinism collector against a board twin: every re-run of a model and its outputs come
back in one command; a re-run that fails is a sentence; outputs are saved only when they differ."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from npu_accept.collect import board_dir_name, collect_over
from npu_accept.collectors.determinism import collect_determinism
from npu_accept.profile import load_profile
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile
from npu_accept.transport import Connection


@pytest.fixture(scope="module")
def board(twin_factory, tmp_path_factory):
    work = tmp_path_factory.mktemp("determinism")
    assets = imx95_assets(work / "assets")
    profile = load_profile(str(imx95_twin_profile(work / "profile", runs=2)))
    return twin_factory(imx95_spec(HEALTHY, assets)), replace(profile, determinism={"runs": 4}), work


class _Counting:
    """The connection, counting the commands it runs."""

    def __init__(self, connection: Connection) -> None:
        self.connection, self.commands = connection, []

    def run(self, cmd, timeout, input=None, **bounds):
        self.commands.append(cmd)
        return self.connection.run(cmd, timeout=timeout, input=input, **bounds)


def _collect(board, artifacts: Path, tamper=None) -> tuple[dict, list[str], Path]:
    twin, profile, _ = board
    with Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts) as connection:
        facts = collect_over(connection, twin.target, profile, artifacts)
        assert not facts.collect_error, facts.collect_error
        if tamper:
            tamper(facts)
        counting = _Counting(connection)
        remote = connection._temp_dirs[0]
        local = artifacts / board_dir_name(twin.target)
        records = collect_determinism(counting, remote, facts, profile, local)
    return records["determinism"], counting.commands, local


def test_three_reruns_cost_one_command_and_identical_outputs_save_no_files(board, tmp_path):
    records, commands, local = _collect(board, tmp_path)
    ((name, record),) = records.items()
    assert len(commands) == 1
    assert record["runs"] == 4 and record["differs"] is None and "error" not in record
    assert len(record["digests"]) == 4 and all(d == record["digests"][0] for d in record["digests"])
    assert not (local / name / "determinism").exists()


def test_a_rerun_that_fails_is_a_sentence(board, tmp_path):
    def missing_input(facts):
        facts.models[0].remote_inputs = ["/nonexistent/in0.npy"]

    records, _, _ = _collect(board, tmp_path, missing_input)
    ((name, record),) = records.items()
    assert record["error"].startswith(f"run 2 of {name} failed with status "), record


def test_outputs_that_differ_are_saved_as_evidence(board, twin_factory, tmp_path):
    _, profile, work = board
    jitter = twin_factory(
        imx95_spec(
            replace(HEALTHY, name="imx95-jitter", delegate_mode="jitter"), imx95_assets(work / "assets")
        )
    )
    records, commands, local = _collect((jitter, profile, work), tmp_path)
    ((name, record),) = records.items()
    assert len(commands) == 1 and record["differs"]["run"] == 2, record
    saved = sorted(p.name for p in (local / name / "determinism").iterdir())
    assert saved and all(p.startswith("run") and p.endswith(".npy") for p in saved), saved
    assert {p.split("-")[0] for p in saved} == {"run2", "run3", "run4"}, saved


def test_an_examination_makes_its_temp_dir_in_the_npu_info_command(board, tmp_path, monkeypatch):
    """No command of its own for the board's temp dir: npu-info's command makes it (one round
    trip fewer), and close() still removes it."""
    twin, profile, _ = board

    def refuse(self, prefix="npu-accept"):
        raise AssertionError("make_temp_dir costs a command of its own")

    monkeypatch.setattr(Connection, "make_temp_dir", refuse)
    before = sorted(p.name for p in twin.board_path("/tmp").iterdir())
    with Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts) as connection:
        facts = collect_over(connection, twin.target, profile, tmp_path)
        assert not facts.collect_error, facts.collect_error
        (remote,) = connection._temp_dirs
        assert facts.info is not None and all(m.npu.ok for m in facts.models)
        assert twin.board_path(f"{remote}/npu-info").is_file()
    assert sorted(p.name for p in twin.board_path("/tmp").iterdir()) == before
    stderr = (tmp_path / board_dir_name(twin.target) / "npu-info.stderr.txt").read_bytes()
    assert b"npu-accept-tmp" not in stderr
