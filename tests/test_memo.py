# SPDX-License-Identifier: MIT
"""npu_accept.memo.shared: a value the board threads share is computed once, also when every
thread asks for it at the same moment (functools.cache computes it once per thread then)."""

from __future__ import annotations

import importlib
import threading
import time

import pytest

from npu_accept import collect
from npu_accept.checks import registry
from npu_accept.memo import shared


def _all_at_once(function, threads: int = 16) -> list:
    barrier = threading.Barrier(threads)
    results: list = [None] * threads

    def call(index: int) -> None:
        barrier.wait()
        results[index] = function()

    workers = [threading.Thread(target=call, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


def test_concurrent_first_calls_compute_once():
    calls = []

    @shared()
    def slow() -> object:
        calls.append(1)
        time.sleep(0.05)  # every other thread arrives while the first computes
        return object()

    results = _all_at_once(slow)
    assert len(calls) == 1
    assert all(r is results[0] for r in results)


def test_a_call_that_raises_caches_nothing():
    attempts = []

    @shared()
    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) == 1:
            raise OSError("not yet")
        return x * 2

    with pytest.raises(OSError):
        flaky(3)
    assert flaky(3) == 6 and flaky(3) == 6
    assert attempts == [3, 3]


def test_keys_and_bound_and_recursion():
    seen = []

    @shared(maxsize=2)
    def fib(n: int) -> int:
        seen.append(n)
        return n if n < 2 else fib(n - 1) + fib(n - 2)  # calls itself while holding its lock

    assert fib(10) == 55
    assert fib.cache_info().currsize == 2
    fib.cache_clear()
    assert fib.cache_info().currsize == 0


def test_the_tools_archive_is_built_once_for_a_fleet(monkeypatch):
    """32 boards start at once: the archive of the on-target tools is built once, not per board."""
    built = []
    real = collect.tar_files

    def counting(files):
        built.append(1)
        time.sleep(0.02)
        return real(files)

    monkeypatch.setattr(collect, "tar_files", counting)
    collect.tools_archive.cache_clear()
    try:
        archives = _all_at_once(collect.tools_archive, threads=32)
    finally:
        collect.tools_archive.cache_clear()
    assert len(built) == 1
    assert len({a.digest for a in archives}) == 1


def test_the_check_registry_is_scanned_once_for_a_fleet(monkeypatch):
    scans = []
    real = registry.pkgutil.iter_modules

    checks_package = [str(p) for p in importlib.import_module("npu_accept.checks").__path__]

    def counting(path):
        if [str(p) for p in path] == checks_package:  # one scan also lists the family packages' checks
            scans.append(1)
            time.sleep(0.02)
        return real(path)

    monkeypatch.setattr(registry.pkgutil, "iter_modules", counting)
    registry._tables.cache_clear()
    try:
        tables = _all_at_once(registry._tables, threads=32)
    finally:
        registry._tables.cache_clear()
    assert len(scans) == 1
    assert all(t is tables[0] for t in tables)
