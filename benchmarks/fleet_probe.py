# SPDX-License-Identifier: MIT
"""A pytest plugin for benchmarks/bench_fleet.py --breakdown: where the suite process's CPU goes.

Loaded into the suite's process (``-p fleet_probe``, this folder on PYTHONPATH) and writing one
JSON file at the end (the path in $NPU_FLEET_PROBE). Each thread's own CPU clock (user + system,
nanosecond resolution) is read when the thread ends, or at the end of the session for threads
still running, and summed by kind:

- ``board``: the suite's per-board threads (collection over SSH and judging the ten checks);
- ``transport``: paramiko's thread of each SSH connection (reads and dispatches every packet);
- ``stdin``: the suite's threads feeding a command's standard input;
- ``other threads``: any other thread (paramiko's handshake timers, ...).

The main thread's CPU is split at pytest's hooks: ``start-up`` (imports, options, collection),
``examination`` (until the first test's call: the wait for the board threads), ``tests`` (the
test cases' own protocol: pytest's per-test cost, the checks' reporting) and ``reports`` (the
reports written at the session's end). What is left of the process's CPU (e.g. numpy's BLAS
threads spinning after import, which Python does not start) is the benchmark's remainder.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import pytest

_LOCK = threading.Lock()
_ENDED: dict[str, float] = {}
_COUNT: dict[str, int] = {}
_MAIN: list[tuple[str, float]] = []  # (phase ended, the main thread's CPU clock then)
_original = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]


def _kind(thread: threading.Thread) -> str:
    if any(c.__name__ == "Transport" and c.__module__.startswith("paramiko") for c in type(thread).__mro__):
        return "transport"
    if thread.name.startswith("board"):
        return "board"
    if thread.name == "npu-accept-stdin":
        return "stdin"
    return "other threads"


def _bootstrap_inner(self: threading.Thread) -> None:
    try:
        _original(self)
    finally:
        spent = time.thread_time()
        kind = _kind(self)
        with _LOCK:
            _ENDED[kind] = _ENDED.get(kind, 0.0) + spent
            _COUNT[kind] = _COUNT.get(kind, 0) + 1


threading.Thread._bootstrap_inner = _bootstrap_inner  # type: ignore[attr-defined]


def _mark(phase: str) -> None:
    _MAIN.append((phase, time.thread_time()))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    _mark("start-up")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    if len(_MAIN) == 1:  # the first test's call: only start-up is marked so far
        _mark("examination")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    _mark("tests")


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    _mark("reports")
    path = os.environ.get("NPU_FLEET_PROBE")
    if not path:
        return
    threads: dict[str, float] = {}
    counts: dict[str, int] = {}
    with _LOCK:
        threads.update(_ENDED)
        counts.update(_COUNT)
    for thread in threading.enumerate():
        if thread is threading.main_thread() or thread.ident is None:
            continue
        try:
            spent = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
        except (OSError, ValueError):
            continue  # ended while being read: its CPU is left to the benchmark's remainder
        kind = _kind(thread)
        threads[kind] = threads.get(kind, 0.0) + spent
        counts[kind] = counts.get(kind, 0) + 1
    main: dict[str, float] = {}
    previous = 0.0
    for phase, clock in _MAIN:
        main[phase] = clock - previous
        previous = clock
    figures: dict[str, Any] = {
        "main": main,
        "threads": threads,
        "thread_counts": counts,
        "process": time.process_time(),
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(figures, handle)
