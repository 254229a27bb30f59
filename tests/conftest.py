# SPDX-License-Identifier: MIT
"""Shared fixtures of the host tests: the source tree on sys.path and the board-twin factory."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
for _p in (_TESTS.parent / "src", _TESTS):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from twins.harness import Twin, TwinError, TwinSpec, start_twin  # noqa: E402

TwinFactory = Callable[[TwinSpec], Twin]


@pytest.fixture(scope="session")
def twin_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwinFactory]:
    """Start board twins from specs; every twin is stopped at the end of the session.

    A twin that cannot start (not root, no unshare, no sshd) FAILS the test with one sentence:
    CI runs as root, so a skip would hide a broken harness.
    """
    workdir = tmp_path_factory.mktemp("twins")
    twins: list[Twin] = []

    def factory(spec: TwinSpec) -> Twin:
        try:
            twin = start_twin(spec, workdir)
        except TwinError as e:
            pytest.fail(str(e), pytrace=False)
        twins.append(twin)
        return twin

    yield factory
    for twin in twins:
        twin.stop()
