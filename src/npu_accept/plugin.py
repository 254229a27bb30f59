# SPDX-License-Identifier: MIT
"""pytest plugin of the acceptance suite (a `pytest11` entry point; the suite's conftest.py also
names it, so a checkout without an install works the same).

    pytest pytests --target USER@HOST[:PORT] --board PROFILE [--identity KEYFILE]
                   [--known-hosts FILE | --accept-new-host-key] [--artifacts DIR]
                   [--baseline FILE] [--strict] [--lava-signals] [--junitxml FILE]

Every test takes the `board` fixture, parametrized by target (fleet mode: `--target` repeats and
the test ids carry the target).  The first test that needs a board has all boards examined
concurrently, one thread per board, and the ten checks judged (the session fixture `fleet` gives
every outcome to tests of your own); each test then reports its check for its board.  The
terminal summary and the reports name the root cause when checks fail.

Installed, the plugin is loaded into every pytest session of its environment: it stays inert
(options only) unless the suite's own conftest.py asks for it (`request_suite`) or a suite
option (`--target`, `--board`) is given.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from threadpoolctl import threadpool_limits

from npu_accept.boardlink import Limits
from npu_accept.checks import roster
from npu_accept.checks.base import CHECK_TITLES, FAIL, SKIP, CheckResult
from npu_accept.checks.registry import judge_all
from npu_accept.checks.summary import root_cause
from npu_accept.collect import Access, Options, collect_board
from npu_accept.completion import Completer, finish_first, stop_on_signals
from npu_accept.facts import BoardFacts
from npu_accept.paths import DataMissing, profile_dirs, target_tools
from npu_accept.profile import Profile, ProfileError, load_profile, profile_names
from npu_accept.report import (
    BoardOutcome,
    ReportsNotWritten,
    baseline_entry,
    board_properties,
    lava_line,
    shown_message,
    write_reports,
)
from npu_accept.transport import TransportError, parse_target, visible


@dataclass
class SuiteState:
    """Per-session state of the plugin, kept in the pytest config stash (no module globals)."""

    targets: list[str]
    profile: Profile
    access: Access
    artifacts: Path
    baseline: dict[str, Any] | None
    strict: bool
    lava: bool
    options: Options = field(default_factory=Options)
    outcomes: dict[str, BoardOutcome] = field(default_factory=dict)  # filled as each board ends
    places: dict[str, dict[str, Any]] = field(default_factory=dict)  # target -> labgrid place
    examining: bool = False  # the boards' examination has started (once per session)
    lava_done: bool = False  # every board's LAVA lines are printed (no board was reachable)


STATE = pytest.StashKey[SuiteState]()
_REQUESTED = pytest.StashKey[bool]()


def request_suite(config: pytest.Config) -> None:
    """Called by the suite's conftest.py: this session runs the acceptance suite."""
    config.stash[_REQUESTED] = True


def _suite_requested(config: pytest.Config) -> bool:
    option = config.option
    return config.stash.get(_REQUESTED, False) or bool(getattr(option, "target", None) or option.board)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("npu-accept", "NPU acceptance suite")
    group.addoption(
        "--target",
        action="append",
        default=[],
        metavar="USER@HOST[:PORT]",
        help="board to accept over SSH; repeat for a fleet (boards run concurrently)",
    )
    group.addoption(
        "--board",
        metavar="PROFILE",
        help="board profile: a name (npu-accept profiles lists them) or a path to a YAML file",
    )
    group.addoption(
        "--profiles-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="a directory of your own board profiles, searched before $NPU_ACCEPT_PROFILES and "
        "the shipped ones (repeatable)",
    )
    group.addoption("--identity", type=Path, metavar="KEYFILE", help="SSH private key")
    group.addoption(
        "--known-hosts",
        type=Path,
        metavar="FILE",
        help="known_hosts file to verify host keys against (default ~/.ssh/known_hosts)",
    )
    group.addoption(
        "--accept-new-host-key",
        action="store_true",
        help="accept and record an unknown host key (explicit opt-in)",
    )
    group.addoption(
        "--artifacts",
        type=Path,
        metavar="DIR",
        help="where outputs, logs, report.md/html and baseline.json are written",
    )
    group.addoption(
        "--baseline",
        type=Path,
        metavar="FILE",
        help="baseline.json of an earlier run: a latency regression beyond tolerance fails",
    )
    # --strict is pytest's own option (strict mode, pytest >= 9); the suite extends it: under
    # --strict a skipped check is a failure.  It is read back with config.getini("strict").
    group.addoption("--lava-signals", action="store_true", help="print LAVA_SIGNAL_TESTCASE lines")
    group.addoption(
        "--keep-tools",
        action="store_true",
        help="leave the on-target tools on each board (named by their content hash); a later run "
        "with this option finds them there and does not send them again",
    )
    group.addoption(
        "--output-limit",
        type=int,
        default=Limits().outputs_bytes >> 20,
        metavar="MIB",
        help="most output-tensor data fetched from one board, in MiB (default %(default)s); "
        "docs/limits.md lists every bound",
    )


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Validate the options and load the profile.  Runs last, so another plugin (e.g. a lab plugin
    turning a labgrid environment into targets) may append to `config.option.target` first."""
    config.addinivalue_line("markers", "npu_check(name): the acceptance check a test reports")
    if not _suite_requested(config) or (config.option.collectonly and not config.option.target):
        return
    targets: list[str] = config.option.target
    if not targets:
        raise pytest.UsageError(
            "The acceptance suite needs a board: add --target USER@HOST[:PORT] (repeat it for a fleet)."
        )
    for target in targets:
        try:
            parse_target(target)
        except TransportError as exc:
            raise pytest.UsageError(str(exc)) from None
    if len(set(targets)) != len(targets):
        raise pytest.UsageError("A --target is given twice; name each board once.")
    search = profile_dirs(config.option.profiles_dir)
    if not config.option.board:
        raise pytest.UsageError(
            "The acceptance suite needs a board profile: add --board PROFILE "
            f"(one of {', '.join(profile_names(search))}) or --board path/to/profile.yaml."
        )
    try:
        profile = load_profile(config.option.board, search)
    except ProfileError as exc:
        raise pytest.UsageError(str(exc)) from None
    for option, path in (("--identity", config.option.identity), ("--baseline", config.option.baseline)):
        if path is not None and not path.is_file():
            raise pytest.UsageError(f"{option} {path} does not exist; give an existing file.")
    try:
        target_tools()
    except DataMissing as exc:
        raise pytest.UsageError(str(exc)) from None
    baseline = _load_baseline(config.option.baseline) if config.option.baseline else None
    if not 1 <= config.option.output_limit <= 1 << 20:
        raise pytest.UsageError(f"--output-limit {config.option.output_limit} is not 1-1048576 MiB.")
    artifacts = _artifacts_dir(config.option.artifacts)
    config.stash[STATE] = SuiteState(
        targets=targets,
        profile=profile,
        access=Access(config.option.identity, config.option.known_hosts, config.option.accept_new_host_key),
        artifacts=artifacts,
        baseline=baseline,
        strict=bool(config.getini("strict")),
        lava=config.option.lava_signals,
        options=Options(
            keep_tools=config.option.keep_tools,
            limits=Limits(outputs_bytes=config.option.output_limit << 20),
        ),
        places=getattr(config.option, "lg_places", None) or {},  # set by npu_accept.lab.pytest_labgrid
    )
    if config.option.lava_signals:
        config.pluginmanager.register(_LavaSignals(config.stash[STATE]), "npu-accept-lava-signals")
    config.pluginmanager.register(Completer(config.stash[STATE].strict), "npu-accept-completer")
    config.add_cleanup(stop_on_signals())


def _artifacts_dir(option: Path | None) -> Path:
    """The artifacts directory, created and proven writable now: reports must be writable at the end."""
    try:
        if option is None:
            return Path(tempfile.mkdtemp(prefix="npu-accept-"))
        option.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=option):
            pass
    except OSError as exc:
        raise pytest.UsageError(
            f"--artifacts {option} cannot be written ({exc.strerror or exc}); give a writable directory."
        ) from None
    return option


def _load_baseline(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise pytest.UsageError(
            f"--baseline {path} is not a JSON file ({exc}); give the baseline.json "
            "an earlier run wrote into --artifacts."
        ) from None
    if not isinstance(data, dict) or data.get("schema") != "npu-accept-baseline/1":
        raise pytest.UsageError(
            f"--baseline {path} is not an npu-accept-baseline/1 file; give the "
            "baseline.json an earlier run wrote into --artifacts."
        )
    return data


def _suite_check(item: pytest.Item) -> roster.Check | None:
    """The roster check a suite test item judges (pytests/test_<number>_<id>.py), None otherwise."""
    stem = getattr(item, "path", Path()).stem
    return next((c for c in roster.ROSTER if c.test_module == stem), None)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """The suite's checks run and report in number order (file names sort test_10 before test_1)."""
    if _suite_requested(config):
        numbered = {id(item): (check.number if (check := _suite_check(item)) else 0) for item in items}
        items.sort(key=lambda item: numbered[id(item)] or len(roster.ROSTER) + 1)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Only the selected checks' facts are collected: `-k driver` runs no model on the boards."""
    state = session.config.stash.get(STATE, None)
    if state is None:
        return
    chosen = {check.id for item in session.items if (check := _suite_check(item))}
    if chosen and chosen != set(roster.BY_ID):
        state.options = replace(state.options, checks=frozenset(chosen))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "board" in metafunc.fixturenames and _suite_requested(metafunc.config):
        state = metafunc.config.stash.get(STATE, None)
        targets = state.targets if state else ["(no --target)"]
        metafunc.parametrize("board", targets, ids=targets, indirect=True, scope="session")


@pytest.fixture(scope="session")
def suite(request: pytest.FixtureRequest) -> SuiteState:
    """The session's options and profile (for tests of your own next to the suite's)."""
    return request.config.stash[STATE]


@pytest.fixture(scope="session")
def fleet(request: pytest.FixtureRequest) -> dict[str, BoardOutcome]:
    """Every board's outcome (for tests of your own next to the suite's)."""
    return _fleet(request)


def _fleet(request: pytest.FixtureRequest) -> dict[str, BoardOutcome]:
    """Examine every board concurrently (one thread each) on first use, then judge the ten checks
    per board; the suite's and the boards' JUnit properties are recorded then.

    A plain function rather than a fixture the per-test fixtures depend on: pytest builds a
    "request" fixture definition (with inspect.signature) for every fixture that takes
    ``request`` each time a test asks for it, cached or not; with one fixture less per test
    that is ~0.3 ms less per test case, 0.1 s at 32 boards (benchmarks/bench_fleet.py).
    """
    suite = request.config.stash[STATE]
    if not suite.examining:
        suite.examining = True
        record = request.getfixturevalue("record_testsuite_property")
        record("profile_name", suite.profile.name)
        record("profile", str(suite.profile.source))
        record("targets", " ".join(suite.targets))
        _examine_all(suite)
        if all(o.facts.unreachable for o in suite.outcomes.values()):
            if suite.lava:  # LAVA still gets a result per test case; the lines bypass output capture
                fleet_ids = len(suite.targets) > 1
                with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
                    for outcome in suite.outcomes.values():
                        for check in outcome.results:
                            sys.stdout.write(lava_line(check, outcome.target, fleet_ids, "fail") + "\n")
                    sys.stdout.flush()
                suite.lava_done = True
            sentences = (shown_message(o.facts.collect_error) for o in suite.outcomes.values())
            pytest.exit(" ".join(sentences), returncode=3)
        fleet_mode = len(suite.outcomes) > 1
        for outcome in suite.outcomes.values():
            for key, value in board_properties(outcome).items():
                record(f"{outcome.target} {key}" if fleet_mode else key, value)
    return suite.outcomes


def _examine_all(suite: SuiteState) -> None:
    """Every board's outcome into suite.outcomes, each as its board ends (an interrupted session
    keeps the verdicts of the boards examined to the end), then in --target order; one board's
    failure never reaches another's."""

    def one(target: str) -> None:
        try:
            suite.outcomes[target] = _examine(target, suite)
        except Exception as exc:  # noqa: BLE001 - _examine catches everything; belt and braces
            suite.outcomes[target] = failed_outcome(target, suite, _unexpected(target, exc))

    # Each board thread compares tensors with numpy: one BLAS thread per call, or N boards times
    # the cores' worth of BLAS threads fight over the host (benchmarks/bench_fleet.py).
    with threadpool_limits(limits=1, user_api="blas"):
        with ThreadPoolExecutor(max_workers=len(suite.targets), thread_name_prefix="board") as pool:
            for future in [pool.submit(one, t) for t in suite.targets]:
                future.result()
    ordered = {t: suite.outcomes[t] for t in suite.targets if t in suite.outcomes}
    suite.outcomes.clear()
    suite.outcomes.update(ordered)


def _examine(target: str, suite: SuiteState) -> BoardOutcome:
    try:
        entry = baseline_entry(suite.baseline, target, suite.profile.name) if suite.baseline else None
        facts = collect_board(target, suite.profile, suite.access, suite.artifacts, entry, suite.options)
        if suite.baseline is not None and entry is None and not facts.collect_error:
            facts.baseline = {"models": {}}
        results, judged = judge_all(facts, suite.profile, suite.options.checks)
        return BoardOutcome(
            target=target,
            profile=suite.profile,
            facts=facts,
            results=results,
            root_cause=root_cause(results),
            place=suite.places.get(target),
            seconds=roster.check_seconds(facts.work, judged, suite.options.checks),
        )
    except Exception as exc:  # noqa: BLE001 - one board's trouble is that board's verdict
        return failed_outcome(target, suite, _unexpected(target, exc))


def _unexpected(target: str, exc: BaseException) -> str:
    return (
        f"Board {target} could not be judged: an unexpected {type(exc).__name__} ({visible(exc)}) "
        "stopped the suite; report it with the board's artifacts."
    )


def failed_outcome(target: str, suite: SuiteState, sentence: str) -> BoardOutcome:
    """A board every check of which fails with one sentence."""
    facts = BoardFacts(target=target, collect_error=sentence)
    results, judged = judge_all(facts, suite.profile, suite.options.checks)
    seconds = roster.check_seconds(facts.work, judged, suite.options.checks)
    return BoardOutcome(
        target, suite.profile, facts, results, root_cause(results), suite.places.get(target), seconds
    )


@pytest.fixture(scope="session")
def board(request: pytest.FixtureRequest) -> BoardOutcome:
    """The examined board this test judges (parametrized by --target)."""
    return _fleet(request)[request.param]


@pytest.fixture
def judge(request: pytest.FixtureRequest, board: BoardOutcome) -> Callable[[str], CheckResult]:
    """`judge("driver")` reports check `driver` of this test's board: pass, fail or skip with its sentence."""
    suite = request.config.stash[STATE]

    def _judge(check: str) -> CheckResult:
        result = board.results[check]
        # Per-test properties exist in JUnit xunit1/legacy only (pytest's default xunit2 keeps
        # properties at suite level, recorded by the fleet fixture); add -o junit_family=xunit1.
        if request.config.getini("junit_family") in ("xunit1", "legacy"):
            record_property = request.getfixturevalue("record_property")
            for key, value in board_properties(board).items():
                record_property(key, value)
            record_property("check", CHECK_TITLES[check])
            record_property("result", result.status)
        request.node.stash[_RESULT] = (board.target, result)
        message = shown_message(result.message)
        if result.status == FAIL:
            pytest.fail(message, pytrace=False)
        if result.status == SKIP:
            if suite.strict:
                pytest.fail(f"Skipped check is a failure under --strict: {message}", pytrace=False)
            pytest.skip(message)
        return result

    return _judge


_RESULT = pytest.StashKey[tuple[str, CheckResult]]()


@pytest.hookimpl(wrapper=True, specname="pytest_runtest_makereport")
def pytest_runtest_makereport_times(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A suite test's time (JUnit, --durations) is its check's own work on its board
    (BoardOutcome.seconds), not the wall time pytest waited: else the first test would carry
    every board's whole examination in its setup, and the others nothing."""
    report = yield
    state = item.config.stash.get(STATE, None)
    if state is not None and _suite_check(item) is not None:
        stored = item.stash.get(_RESULT, None)
        if report.when == "setup" and report.passed:
            report.duration = 0.0
        elif report.when == "call" and stored is not None and stored[0] in state.outcomes:
            report.duration = state.outcomes[stored[0]].seconds.get(stored[1].check, 0.0)
    return report


class _LavaSignals:
    """Registered only with --lava-signals: a LAVA_SIGNAL_TESTCASE line after each check's test
    (a hook every test pays for otherwise)."""

    def __init__(self, state: SuiteState) -> None:
        self.state = state

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        stored = item.stash.get(_RESULT, None)
        if report.when == "call" and stored is not None:
            target, result = stored
            status = "pass" if report.passed else "skip" if report.skipped else "fail"
            line = lava_line(result.check, target, len(self.state.targets) > 1, status)
            sys.stdout.write("\n" + line + "\n")
            sys.stdout.flush()
        return report


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None or not state.outcomes:
        return
    terminalreporter.section("NPU acceptance")
    for outcome in state.outcomes.values():
        unselected = sum(r.details.get("selected") is False for r in outcome.results.values())
        skips = sum(r.status == SKIP for r in outcome.results.values()) - unselected
        accepted = outcome.accepted and not (state.strict and skips)
        line = f"{outcome.target} ({state.profile.name}): {'ACCEPTED' if accepted else 'NOT ACCEPTED'}"
        if unselected:
            line += (
                f" (only {len(outcome.results) - unselected} of {len(outcome.results)} checks were selected)"
            )
        if skips:
            line += f" ({skips} check(s) skipped{', failures under --strict' if state.strict else ''})"
        if outcome.root_cause:
            line += f" — root cause: {shown_message(outcome.root_cause)}"
        terminalreporter.write_line(line)
    terminalreporter.write_line(
        f"report: {state.artifacts / 'report.md'} and report.html; "
        f"baseline for --baseline: {state.artifacts / 'baseline.json'}"
    )


@pytest.hookimpl(tryfirst=True, specname="pytest_configure")
def pytest_configure_live_trace(config: pytest.Config) -> None:
    """`-v` prints every board's trace live: pytest's own live logging of the `npu_accept.trace`
    records (at INFO), set up before pytest's logging plugin reads its options. An explicit
    --log-cli-level wins."""
    if not _suite_requested(config) or config.option.verbose < 1:
        return
    if config.getoption("log_cli_level", None) is None:
        config.option.log_cli_level = "INFO"
        if config.getoption("log_cli_format", None) is None:
            config.option.log_cli_format = "%(name)s %(message)s"


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Reports for every board given, whatever happened; this hook never raises. Runs before
    the JUnit file is written, which then holds every board's tests (completion.Completer)."""
    state = session.config.stash.get(STATE, None)
    if state is None or session.config.option.collectonly:
        return
    finish_first()
    for target in state.targets:
        if target not in state.outcomes:
            state.outcomes[target] = failed_outcome(
                target,
                state,
                f"Board {target} was not examined: the session ended first (interrupted, or no "
                "test of the suite was selected).",
            )
    try:
        write_reports([state.outcomes[t] for t in state.targets], state.artifacts, baseline=True)
    except ReportsNotWritten as exc:
        sys.stderr.write(f"npu-accept: {exc}; the verdicts above stand.\n")
    except Exception as exc:  # noqa: BLE001 - a report problem must not hide the verdicts
        sys.stderr.write(
            f"npu-accept: the reports could not be written to {state.artifacts} "
            f"({type(exc).__name__}: {visible(exc)}); the verdicts above stand.\n"
        )
    completer = session.config.pluginmanager.get_plugin("npu-accept-completer")
    try:
        if isinstance(completer, Completer):
            completer.complete(session, state.outcomes, _lava_writer(session.config, state))
    except Exception as exc:  # noqa: BLE001 - the JUnit file is still written with what ran
        sys.stderr.write(
            f"npu-accept: the tests that did not run could not be reported from their verdicts "
            f"({type(exc).__name__}: {visible(exc)}); the JUnit file holds the tests that ran.\n"
        )


def _lava_writer(config: pytest.Config, state: SuiteState) -> Callable[[str, str, str], None] | None:
    """With --lava-signals, a LAVA line for each test reported at the session's end (not when
    the no-board-reachable path printed every board's lines already)."""
    if not state.lava or state.lava_done:
        return None
    capture = config.pluginmanager.getplugin("capturemanager")

    def write(check: str, target: str, status: str) -> None:
        with capture.global_and_fixture_disabled():
            sys.stdout.write(lava_line(check, target, len(state.targets) > 1, status) + "\n")
            sys.stdout.flush()

    return write


@pytest.hookimpl(wrapper=True, specname="pytest_sessionfinish")
def pytest_sessionfinish_junit(session: pytest.Session) -> Any:
    """pytest's JUnit writer on a full disk raises from its own hook (an INTERNALERROR traceback):
    say it in one sentence instead, and remove the partial file."""
    try:
        return (yield)
    except OSError as exc:
        path = getattr(session.config.option, "xmlpath", None)
        if not path or session.config.stash.get(STATE, None) is None:
            raise
        Path(path).unlink(missing_ok=True)
        sys.stderr.write(
            f"npu-accept: the JUnit file {path} could not be written ({visible(exc.strerror or exc)}); "
            "free space there or give --junitxml another disk; the verdicts above and the reports stand.\n"
        )
        return None
