# SPDX-License-Identifier: MIT
"""A board can be broken, slow or hostile: the suite keeps its promises anyway.

Hostile i.MX95 twins (tests/twins/boards_hostile.py) in one fleet with a healthy one: every hostile
board gets its own one-sentence verdict, the healthy board is judged exactly as alone, the reports
are written for every board, board text reaches no output raw, and the suite's memory stays
bounded while boards flood it (peak RSS of the suite process, measured)."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from twins.boards_hostile import MODES, hostile_spec
from twins.boards_run import SuiteRun, run_suite

from npu_accept.checks import CHECK_ORDER
from npu_accept.sim.harness import Twin, fleet_access
from npu_accept.sim.imx95 import HEALTHY, imx95_assets, imx95_spec, imx95_twin_profile
from npu_accept.transport import Connection

# What each hostile board's verdict says (its root cause, one sentence).
EXPECTED = {
    "flood-info": "printed more than 64 MiB",
    "flood-line": "printed more than 64 MiB",
    "flood-random": "printed more than 64 MiB",
    "invalid-json": "npu-info printed no valid JSON",
    "deep-json": "npu-info printed JSON nested",
    "mistyped-json": "npu-info printed a report that breaks its npu-info schema",
    "absurd-json": "npu-info printed a report that breaks its npu-info schema",
    "pickle-npy": "holds Python objects (dtype object)",
    "lying-npy": "declares shape [1000000000] of float32",
    "name-clash": "named an output file 'npu-run.json' that is not a plain .npy file",
    "escapes": "\\e]0;pwned\\x07\\e[2J",
    "dropped-link": "dropped while running 'cd /tmp/npu-accept.",
    "reboot": "dropped while running 'mkdir -p /tmp/npu-accept.",
}
# Per-board memory the suite may add while a board floods it: a command keeps 1 MiB per stream and
# paramiko buffers at most the 8 MiB channel window (docs/limits.md); the rest is allocator slack.
FLOOD_RSS_MIB = 48
RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202e]")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hostile")


@pytest.fixture(scope="module")
def profile(work: Path) -> Path:
    return imx95_twin_profile(work / "profile", runs=3)


@pytest.fixture(scope="module")
def twins(twin_factory, work: Path) -> dict[str, Twin]:
    assets = imx95_assets(work / "assets")
    boards = {"healthy": twin_factory(imx95_spec(HEALTHY, assets))}
    for mode in MODES:
        boards[mode] = twin_factory(hostile_spec(mode, assets))
    return boards


@pytest.fixture(scope="module")
def alone(twins: dict[str, Twin], profile: Path, work: Path) -> SuiteRun:
    """The healthy twin on its own: the verdicts the fleet must not change."""
    twin = twins["healthy"]
    return run_suite([twin.target], profile, work / "alone", twin.identity, twin.known_hosts)


@pytest.fixture(scope="module")
def fleet(twins: dict[str, Twin], profile: Path, work: Path) -> SuiteRun:
    identity, known_hosts = fleet_access(list(twins.values()), work / "access")
    return run_suite([t.target for t in twins.values()], profile, work / "fleet", identity, known_hosts)


def _board(run: SuiteRun, twin: Twin) -> dict:
    return run.summary()[twin.target]


def test_the_healthy_board_is_judged_as_if_alone(fleet: SuiteRun, alone: SuiteRun, twins) -> None:
    assert alone.returncode == 0, alone.describe()
    healthy = twins["healthy"].target
    assert fleet.results(healthy) and {c: r.status for c, r in fleet.results(healthy).items()} == {
        c: r.status for c, r in alone.results().items()
    }, fleet.describe()
    assert _board(fleet, twins["healthy"])["accepted"] is True


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_each_hostile_board_gets_its_own_one_sentence_verdict(fleet: SuiteRun, twins, mode: str) -> None:
    board = _board(fleet, twins[mode])
    cause = board["root_cause"] or ""
    assert board["accepted"] is False, cause
    assert EXPECTED[mode] in cause, cause
    assert "\n" not in cause and len(cause) <= 900 and "Traceback" not in cause
    assert len(fleet.results(twins[mode].target)) == len(fleet.results(twins["healthy"].target))


def test_a_board_whose_sftp_never_answers_is_accepted_in_normal_time(fleet: SuiteRun, twins) -> None:
    # The suite moves files over exec channels; an SFTP server that hangs cannot hold it.
    assert _board(fleet, twins["silent-sftp"])["accepted"] is True
    assert fleet.seconds < 240


def test_the_fleet_exits_1_and_writes_every_report(fleet: SuiteRun, twins) -> None:
    assert fleet.returncode == 1, fleet.describe()
    assert set(fleet.summary()) == {t.target for t in twins.values()}
    for name in ("report.md", "report.html", "summary.json", "baseline.json"):
        assert (fleet.artifacts / name).is_file(), name
    report = (fleet.artifacts / "report.md").read_text()
    assert all(t.target in report for t in twins.values())
    # a 70 MB line and endless random bytes do not make large reports
    assert (fleet.artifacts / "report.md").stat().st_size < 400_000
    assert (fleet.artifacts / "report.html").stat().st_size < 1_000_000
    assert (fleet.artifacts.parent / "junit.xml").stat().st_size < 1_000_000


def test_board_text_reaches_no_output_raw(fleet: SuiteRun) -> None:
    outputs = {
        "terminal": fleet.stdout + fleet.stderr,
        "junit.xml": (fleet.artifacts.parent / "junit.xml").read_text(errors="replace"),
        "report.md": (fleet.artifacts / "report.md").read_text(),
        "report.html": (fleet.artifacts / "report.html").read_text(),
        "summary.json": json.dumps(fleet.summary(), ensure_ascii=False),
    }
    for name, text in outputs.items():
        assert not RAW.search(text), f"{name}: {RAW.search(text)!r}"
        if name.startswith("report") or name == "junit.xml":  # where HTML or XML could be rendered
            assert "<script>" not in text, name
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\e]0;pwned\\x07" in outputs["report.md"]
    assert "&lt;script&gt;" in outputs["report.html"]


def test_board_chosen_names_never_touch_the_suites_artifacts(fleet: SuiteRun, twins) -> None:
    board = fleet.artifacts / twins["name-clash"].target.replace("@", "_").replace(":", "_")
    own = json.loads((board / "face_detection" / "npu" / "npu-run.json").read_text())
    assert own["schema"] == "npu-run/1" and own["outputs"][0]["file"] == "npu-run.json"
    files = {p.name for p in (board / "face_detection" / "npu").iterdir()}
    assert files <= {"npu-run.json", "npu-run.stderr.txt", "out0.npy", "out1.npy"}, files


def test_a_flooding_fleet_keeps_host_memory_bounded(fleet: SuiteRun, alone: SuiteRun) -> None:
    floods = sum(mode.startswith("flood") for mode in MODES)
    extra_mib = (fleet.max_rss_kib - alone.max_rss_kib) / 1024
    assert alone.max_rss_kib > 0 and extra_mib < floods * FLOOD_RSS_MIB + 64, (
        f"{fleet.max_rss_kib} KiB vs {alone.max_rss_kib}"
    )


@pytest.mark.parametrize("mode", ["flood-info", "flood-random"])
def test_one_flooding_board_keeps_host_memory_bounded(
    twins, alone: SuiteRun, profile: Path, work: Path, mode: str
) -> None:
    twin = twins[mode]
    run = run_suite([twin.target], profile, work / f"solo-{mode}", twin.identity, twin.known_hosts)
    assert run.returncode == 1, run.describe()
    assert "printed more than 64 MiB" in (_board(run, twin)["root_cause"] or "")
    extra_mib = (run.max_rss_kib - alone.max_rss_kib) / 1024
    assert extra_mib < FLOOD_RSS_MIB, f"{mode}: {run.max_rss_kib} KiB vs healthy {alone.max_rss_kib} KiB"


def test_generic_cpu_board_with_garbage_npu_info_is_not_accepted(twins, work: Path) -> None:
    import yaml

    from npu_accept.paths import packaged_profiles_dir
    from npu_accept.sim.imx95 import MODELS_DIR, REFERENCE_NAME

    data = yaml.safe_load((packaged_profiles_dir() / "generic-cpu.yaml").read_text())
    data["models"][0].update(
        name="face_detection",
        path=f"{MODELS_DIR}/{REFERENCE_NAME}",
        inputs=[{"random": {"shape": [1, 128, 128, 3], "dtype": "float32", "low": -1, "high": 1, "seed": 0}}],
    )
    data["performance"].update(runs=3, warmup=1)
    profile = work / "generic-twin.yaml"
    profile.write_text(yaml.safe_dump(data))
    twin = twins["invalid-json"]
    run = run_suite([twin.target], profile, work / "generic-garbage", twin.identity, twin.known_hosts)
    assert run.returncode == 1, run.describe()
    assert _board(run, twin)["accepted"] is False
    assert "npu-info printed no valid JSON" in (_board(run, twin)["root_cause"] or "")


def test_a_rebooted_board_leaves_no_temp_dir_after_the_next_connection(fleet: SuiteRun, twins) -> None:
    twin = twins["reboot"]
    deadline = time.monotonic() + 20
    while True:  # the board comes back by itself
        try:
            connection = Connection.open(twin.target, identity=twin.identity, known_hosts=twin.known_hosts)
            break
        except Exception:  # noqa: BLE001 - still rebooting
            assert time.monotonic() < deadline, "the rebooting twin did not come back"
            time.sleep(0.2)
    with connection:
        stale = [p for p in twin.board_path("/tmp").iterdir() if p.name.startswith("npu-accept.")]
        mine = connection.make_temp_dir()
        left = [p for p in twin.board_path("/tmp").iterdir() if p.name.startswith("npu-accept.")]
    assert stale and [p.name for p in left] == [Path(mine).name]


def test_timings_json_has_connect_and_close(alone: SuiteRun, twins) -> None:
    board = alone.artifacts / twins["healthy"].target.replace("@", "_").replace(":", "_")
    timings = json.loads((board / "timings.json").read_text())
    assert list(timings)[0] == "connect" and list(timings)[-1] == "close", timings
    assert {"npu-info", "outputs"} <= set(timings) and all(v >= 0 for v in timings.values())


def test_each_boards_junit_times_add_up_to_its_own_examination(fleet: SuiteRun, twins) -> None:
    """In a fleet the boards are examined at once: each test's JUnit time is its check's work on
    its own board, so one board's tests add up to that board's examination (timings.json)."""
    for name, twin in twins.items():
        board = fleet.artifacts / twin.target.replace("@", "_").replace(":", "_")
        examined = sum(json.loads((board / "timings.json").read_text()).values())
        times = [c.seconds for c in fleet.cases if c.target == twin.target]
        assert len(times) == len(CHECK_ORDER), name
        assert sum(times) == pytest.approx(examined, rel=0.1, abs=0.05), (name, times, examined)
