# SPDX-License-Identifier: MIT
"""Shared fixtures of the host tests: the source tree on sys.path, the board-twin factory and the
`twin` marker.

A test that starts board twins or otherwise needs root (fixtures in ROOT_FIXTURES, used directly
or through other fixtures) is marked `twin` automatically: `pytest -m "not twin" tests` is the
fast subset that needs neither root nor sshd.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent
# the checkout's own sources first: the host package, the on-target package (npu_target, from the
# npu-tools recipe's files/, where the wheel takes it from too) and the tests' helpers
_TARGET_FILES = _TESTS.parent / "meta-npu" / "recipes-tools" / "npu-tools" / "files"
for _p in (_TARGET_FILES, _TESTS.parent / "src", _TESTS):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from npu_accept.sim.harness import Twin, TwinError, TwinSpec, start_twin, stop_twins  # noqa: E402

TwinFactory = Callable[[TwinSpec], Twin]
ROOT_FIXTURES = frozenset({"twin_factory", "loop_device"})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "twin: starts board twins or needs root otherwise (sshd, namespaces, loop devices)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if ROOT_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.twin)


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
    stop_twins(twins)


@pytest.fixture
def tiny_disk(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A 64 KiB tmpfs (root only): the layout docs/limits.md shows, on a disk that fills. Another
    size through indirect parametrization: `@pytest.mark.parametrize("tiny_disk", ["2m"], indirect=True)`."""
    size = getattr(request, "param", "64k")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)], capture_output=True
    )
    if done.returncode:
        pytest.fail(f"mount tmpfs failed ({done.stderr.decode().strip()}); the tests run as root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)
