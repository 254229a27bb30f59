# SPDX-License-Identifier: MIT
"""pytest plugin: `--lg-env ENV.yaml` as an alternative to `--target` for the acceptance suite.

Loaded from pytests/conftest.py. When labgrid is installed its own pytest plugin owns the
`--lg-env` and `--lg-coordinator` options (and the `env`/`target` fixtures); otherwise this module
adds them so that using them says how to install labgrid. Before the suite's plugin reads its
options (its pytest_configure runs last), the environment's targets become `--target` values, its
SSH keyfile `--identity`, its `options: npu_board` the `--board` when none is given, and the
labgrid place of each target (a RemotePlace) `config.option.lg_places`, which the reports show
beside the address.

The environment is built here, not taken from labgrid's plugin, so `--lg-coordinator` is applied
here too (labgrid's plugin applies it only to its own Environment).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from npu_accept.lab.errors import LabError
from npu_accept.lab.labgrid_env import load_environment


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    if pluginmanager.has_plugin("labgrid"):
        return
    group = parser.getgroup("npu-accept")
    group.addoption(
        "--lg-env",
        dest="lg_env",
        metavar="ENV.yaml",
        help="labgrid environment naming the boards (NetworkService + SSHDriver); needs labgrid",
    )
    group.addoption(
        "--lg-coordinator",
        dest="lg_coordinator",
        metavar="HOST:PORT",
        help="labgrid coordinator of the environment's RemotePlaces; needs labgrid",
    )


def pytest_configure(config: pytest.Config) -> None:
    env_file = getattr(config.option, "lg_env", None) or os.environ.get("LG_ENV")
    if not env_file:
        return
    if config.option.target:
        raise pytest.UsageError("Give the boards either with --target or with --lg-env, not both.")
    try:
        lab = load_environment(Path(env_file), getattr(config.option, "lg_coordinator", None))
    except LabError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.option.target = [t.target for t in lab.targets]
    config.option.lg_places = {
        t.target: {"name": t.place.name, "tags": dict(t.place.tags), "coordinator": t.place.coordinator}
        for t in lab.targets
        if t.place is not None
    }
    identities = {t.identity for t in lab.targets if t.identity is not None}
    if len(identities) > 1:
        raise pytest.UsageError(
            f"labgrid environment {env_file} gives each target its own SSH key; "
            "the suite takes one --identity, so use one key for the fleet."
        )
    if identities and getattr(config.option, "identity", None) is None:
        config.option.identity = identities.pop()
    if lab.board and not getattr(config.option, "board", None):
        config.option.board = lab.board


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test case of a board from a labgrid place carries the place in the JUnit XML."""
    places = getattr(config.option, "lg_places", None) or {}
    if not places:
        return
    from npu_accept.report import place_text

    for item in items:
        callspec = getattr(item, "callspec", None)
        place = places.get(callspec.params.get("board")) if callspec is not None else None
        if place:
            item.user_properties.append(("place", place_text(place)))
