# SPDX-License-Identifier: MIT
"""A session that ends early still ends whole: termination signals stop it as Ctrl-C does, and
every test of the suite that did not report (interrupted, or stopped by "no board reachable")
is reported from its board's verdict, so the JUnit file holds every board given.

- `stop_on_signals`: SIGTERM (what CI timeouts send) and SIGHUP (a closed terminal) raise
  KeyboardInterrupt in the main thread, as SIGINT does: the boards' threads finish and clean up,
  the reports are written, the exit status is pytest's 2.
- `Completer`: a plugin remembering which tests reported; at the session's end, before the
  JUnit file is written, it reports each other test of the suite from its board's outcome
  (setup, call and teardown reports, as a run of the test would have made them).
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any, Literal

import pytest
from _pytest.reports import TestReport

from npu_accept.checks.base import CHECK_TITLES, FAIL, SKIP

SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)


def stop_on_signals() -> Callable[[], None]:
    """Handle SIGTERM and SIGHUP as SIGINT; returns the function that puts the old handlers back.
    Outside the main thread (an embedding program) nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, Any] = {}

    def interrupt(number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        sys.stderr.write(
            f"\nnpu-accept: {name} received: stopping as on Ctrl-C (every board being examined "
            "finishes and is cleaned up; the reports are written).\n"
        )
        raise KeyboardInterrupt(name)

    previous[signal.SIGINT] = signal.getsignal(signal.SIGINT)  # finish_first replaces it at the end
    for number in SIGNALS:
        previous[number] = signal.signal(number, interrupt)

    def restore() -> None:
        for number, handler in previous.items():
            signal.signal(number, handler)

    return restore


def finish_first() -> None:
    """From here on (the reports being written) a termination signal is said and then ignored:
    the session is ending anyway, and a half-written set of reports helps nobody."""
    if threading.current_thread() is not threading.main_thread():
        return

    def noted(number: int, frame: FrameType | None) -> None:
        name = signal.Signals(number).name
        sys.stderr.write(
            f"\nnpu-accept: {name} received while the reports are written; finishing them first.\n"
        )

    for number in (signal.SIGINT, *SIGNALS):
        signal.signal(number, noted)


def check_of(item: pytest.Item) -> str | None:
    """The check a suite test reports (test_<check> of pytests/test_<n>_<check>.py), else None."""
    name = getattr(item, "originalname", item.name).removeprefix("test_")
    return name if name in CHECK_TITLES else None


def board_of(item: pytest.Item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("board") if callspec is not None else None


class Completer:
    """Reports, from the verdicts, every suite test that did not report itself."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict
        self.reported: set[str] = set()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: TestReport) -> None:
        if report.when == "teardown":
            self.reported.add(report.nodeid)

    def complete(
        self,
        session: pytest.Session,
        outcomes: dict[str, Any],
        signal_line: Callable[[str, str, str], None] | None = None,
    ) -> None:
        """Called at the session's end (before the JUnit file is written); `signal_line(check,
        target, status)` is called for each test reported here (LAVA's lines)."""
        for item in list(session.items):
            target, check = board_of(item), check_of(item)
            if item.nodeid in self.reported or target not in outcomes or check is None:
                continue
            result = outcomes[target].results.get(check)
            if result is None:
                continue
            for report in self._reports(item, result, outcomes[target].seconds.get(check, 0.0)):
                item.ihook.pytest_runtest_logreport(report=report)
                if signal_line is not None and report.when == "call":
                    status = "pass" if report.passed else "skip" if report.skipped else "fail"
                    signal_line(check, target, status)

    def _reports(self, item: pytest.Item, result: Any, seconds: float) -> Iterator[TestReport]:
        """setup, call and teardown of one test; the call takes the check's own time on the board."""
        from npu_accept.report import shown_message

        message = shown_message(result.message)
        status: Literal["passed", "failed", "skipped"] = "passed"
        longrepr: str | tuple[str, int, str] | None = None
        if result.status == FAIL or (result.status == SKIP and self.strict):
            status = "failed"
            longrepr = (
                message if result.status == FAIL else f"Skipped check is a failure under --strict: {message}"
            )
        elif result.status == SKIP:
            path, line, _ = item.location
            status, longrepr = "skipped", (str(path), (line or 0) + 1, f"Skipped: {message}")
        keywords = {k: 1 for k in item.keywords}
        yield TestReport(item.nodeid, item.location, keywords, "passed", None, "setup")
        yield TestReport(item.nodeid, item.location, keywords, status, longrepr, "call", duration=seconds)
        yield TestReport(item.nodeid, item.location, keywords, "passed", None, "teardown")
